print("httpdnsd")

#ifndef CHTTPDNS_CURL_SHIM_H
#define CHTTPDNS_CURL_SHIM_H
#include <curl/curl.h>
/* The curl loop waits with epoll (Glibc's module does not have it). */
#include <sys/epoll.h>

/// Typed wrappers for the variadic curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt.
static inline CURLcode chttpdns_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode chttpdns_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode chttpdns_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode chttpdns_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode chttpdns_curl_setopt_write(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode chttpdns_curl_setopt_header(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode chttpdns_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode chttpdns_curl_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode chttpdns_curl_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode chttpdns_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/// The multi_socket interface: curl tells which sockets to watch and when to time out; the
/// caller's event loop (epoll) calls curl_multi_socket_action for the sockets that are ready.
static inline CURLMcode chttpdns_curl_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode chttpdns_curl_multi_socketfunction(CURLM *m, curl_socket_callback f) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f); }
static inline CURLMcode chttpdns_curl_multi_timerfunction(CURLM *m, curl_multi_timer_callback f) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f); }
/// CURL_SOCKET_TIMEOUT (a macro of a macro): "no socket, the timer expired".
static inline curl_socket_t chttpdns_curl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

/// The fields of a CURLMsg (its `data` member is a union Swift sees awkwardly).
static inline CURLMSG chttpdns_curl_msg_kind(CURLMsg *m) { return m->msg; }
static inline CURL *chttpdns_curl_msg_handle(CURLMsg *m) { return m->easy_handle; }
static inline CURLcode chttpdns_curl_msg_result(CURLMsg *m) { return m->data.result; }

/// curl_global_init(CURL_GLOBAL_ALL): CURL_GLOBAL_ALL is a composite macro Swift may not import.
static inline CURLcode chttpdns_curl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }
static inline CURLcode chttpdns_curl_setopt_write_fn(CURL *h, CURLoption o, curl_write_callback f) { return curl_easy_setopt(h, o, f); }

#endif

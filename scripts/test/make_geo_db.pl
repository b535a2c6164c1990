#!/usr/bin/perl
# Writes two small MaxMind DB files for the tests of `rules` geo conditions (docs/rules.md):
#   OUT_DIR/test-city.mmdb  GeoLite2-City shaped: country.iso_code, subdivisions[].iso_code
#   OUT_DIR/test-asn.mmdb   GeoLite2-ASN shaped: autonomous_system_number, ..._organization
# for loopback test ranges (documentation addresses only, never traffic):
#   127.0.0.0/24  CN, CN-ZJ, AS4134       127.0.1.0/24  US, US-CA, AS15169
#   ::1/128       DE, DE-BE, AS3320
# usage: scripts/test/make_geo_db.pl OUT_DIR
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my $dir = shift or die "usage: $0 OUT_DIR\n";
my %types = (
    country => 'map', subdivisions => ['array', 'map'], iso_code => 'utf8_string', names => 'map', en => 'utf8_string',
    autonomous_system_number => 'uint32', autonomous_system_organization => 'utf8_string',
);

sub tree {
    my ($type) = @_;
    # remove_reserved_networks => 0: the test ranges are loopback, which the writer drops by default.
    return MaxMind::DB::Writer::Tree->new(
        ip_version => 6, record_size => 24, database_type => $type, languages => ['en'],
        description => {en => "httpdnsd test $type"}, remove_reserved_networks => 0,
        map_key_type_callback => sub { $types{$_[0]} },
    );
}

sub write_tree {
    my ($tree, $path) = @_;
    open my $fh, '>:raw', $path or die "$path: $!\n";
    $tree->write_tree($fh);
    close $fh or die "$path: $!\n";
}

my @ranges = (
    ['127.0.0.0/24', 'CN', 'ZJ', 4134, 'CHINANET'],
    ['127.0.1.0/24', 'US', 'CA', 15169, 'GOOGLE'],
    ['::1/128', 'DE', 'BE', 3320, 'DTAG'],
);
my $city = tree('GeoLite2-City');
my $asn = tree('GeoLite2-ASN');
for my $range (@ranges) {
    my ($network, $country, $subdivision, $number, $organization) = @$range;
    $city->insert_network($network,
        {country => {iso_code => $country, names => {en => $country}}, subdivisions => [{iso_code => $subdivision, names => {en => $subdivision}}]});
    $asn->insert_network($network, {autonomous_system_number => $number, autonomous_system_organization => $organization});
}
write_tree($city, "$dir/test-city.mmdb");
write_tree($asn, "$dir/test-asn.mmdb");

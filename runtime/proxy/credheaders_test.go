package proxy

import "testing"

// TestCarriesCredential: the header fields a real value may be swapped
// into for every inject host, by hand from RFC 9110, RFC 6265 and the
// APIs' documentation: credentials yes, whatever the case or separator;
// what an object store keeps with an object no, whatever word its name
// holds; anything else no.
func TestCarriesCredential(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"Authorization", true},
		{"authorization", true},
		{"Cookie", true},
		{"Proxy-Authorization", true}, // hop-by-hop: never forwarded anyway
		{"X-Api-Key", true},
		{"X-API-KEY", true},
		{"x_api_key", true},
		{"Apikey", true},
		{"Private-Token", true},
		{"Job-Token", true},
		{"X-Auth-Token", true},
		{"X-Goog-Api-Key", true},
		{"Ocp-Apim-Subscription-Key", true},
		{"X-Vault-Token", true},
		{"X-Amz-Security-Token", true},
		{"X-Amz-Server-Side-Encryption-Customer-Key", true},
		{"X-Hasura-Admin-Secret", true},
		{"X-Session-Token", true},
		{"X-Signature", true},
		{"X-Password", true},
		{"X-Passwd", true},
		{"X-Credential", true},
		{"Circle-Token", true},
		{"X-Shopify-Access-Token", true},
		{"X-Registry-Auth", true},

		{"X-Amz-Meta-Token", false},
		{"x-amz-meta-api-key", false},
		{"X-Amz-Meta-Note", false},
		{"X-Goog-Meta-Secret", false},
		{"X-Ms-Meta-Auth", false},
		{"X-Object-Meta-Temp-Url-Key", false},
		{"X-Container-Meta-Temp-Url-Key", false},
		{"X-Account-Meta-Temp-Url-Key", false},
		{"X-Oss-Meta-Token", false},
		{"X-Cos-Meta-Token", false},
		{"X-Obs-Meta-Token", false},
		{"X-Bz-Info-Token", false},
		{"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", false},
		{"X-Goog-Encryption-Kms-Key-Name", false},
		{"X-Oss-Server-Side-Encryption-Key-Id", false},

		{"Content-Type", false},
		{"Content-Disposition", false},
		{"X-Amz-Tagging", false},
		{"X-Amz-Website-Redirect-Location", false},
		{"User-Agent", false},
		{"X-Note", false},
		{"X-Honeycomb-Team", false}, // a credential by another name: bodyInjectHosts
		{"Metadata-Flavor", false},  // "meta" is not a segment of it, nor a credential word
	} {
		if got := carriesCredential(tc.name); got != tc.want {
			t.Errorf("carriesCredential(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package proxy

import (
	"strings"
	"testing"
)

// TestCarriesCredential: the header fields a real value may be swapped
// into for every inject host, by hand from RFC 9110, RFC 6265 and the
// APIs' documentation: credentials yes, whatever the case or separator;
// what an object store keeps with an object, and the ids and names a
// host keeps with its record of a request, no, whatever word their
// names hold; a credential word inside a longer part no; anything else
// no.
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
		{"Proxy-Authorization", true},
		{"X-Authorization", true},
		{"X-Authentication", true},
		{"X-Auth-Key", true},
		{"X-Apikey", true},
		{"x-apikey", true},
		{"X-Client-Secret", true},
		{"X-Credentials", true},
		{"X-Session-Id", true},
		{"Signature", true},
		{"X_Auth_Token", true},

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
		{"X-Cos-Server-Side-Encryption-Cos-Kms-Key-Id", false},
		{"X-Meta-Token", false},
		{"X-Meta-Key", false},
		{"X-Bce-Meta-Secret", false},
		{"X-Qn-Meta-Token", false},
		{"X-Archive-Meta-Auth", false},
		{"X-Object-Sysmeta-Key", false},

		// What a host keeps with its record of a request, and serves back.
		{"Idempotency-Key", false},
		{"idempotency-key", false},
		{"X-Idempotency-Key", false},
		{"I-Twilio-Idempotency-Token", false},
		{"X-Idempotent-Key", false},
		{"Idempotency_Key", false},
		{"X-Request-Id", false},
		{"X-Request-Key", false},
		{"X-Request-Token", false},
		{"X-Client-Request-Id", false},
		{"X-Correlation-Id", false},
		{"X-Correlation-Token", false},
		{"X-Trace-Key", false},
		{"X-Session-Name", false},
		{"X-Key-Name", false},
		{"X-Secret-Name", false},
		{"Sec-WebSocket-Key", false},

		// A credential word inside a longer part is no credential word.
		{"X-Author", false},
		{"X-Authors", false},
		{"X-Keywords", false},
		{"X-Keyword", false},
		{"X-Tokenizer", false},
		{"X-Tokens-Used", false},
		{"X-Monkey", false},
		{"X-Secretary", false},
		{"X-Sessions", false},
		{"Authority", false},
		{"X-Passwordless", false},

		{"Content-Type", false},
		{"Content-Disposition", false},
		{"Content-Language", false},
		{"Cache-Control", false},
		{"Slug", false},
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

// TestHeaderRules: every rule is of a kind matches knows, lower-case
// (names are matched lower-cased), and says why it is there.
func TestHeaderRules(t *testing.T) {
	for _, rules := range [][]headerRule{notCredentialHeaders, credentialHeaders} {
		for _, r := range rules {
			if r.how != "name" && r.how != "prefix" && r.how != "part" {
				t.Errorf("rule %q: kind %q, want name, prefix or part", r.text, r.how)
				continue
			}
			if !r.matches(r.text) && r.how != "part" || r.how == "part" && !r.matches("x-"+r.text+"-y") {
				t.Errorf("rule %s %q does not match its own text", r.how, r.text)
			}
			if r.text != strings.ToLower(r.text) || r.why == "" {
				t.Errorf("rule %s %q: not lower-case, or no reason", r.how, r.text)
			}
		}
	}
}

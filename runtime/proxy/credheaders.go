package proxy

import "strings"

// Where a real value may go. A masked credential's real value is
// swapped into a request only where a credential belongs: the header
// fields that carry credentials. A host consumes what such a field holds
// to authenticate the request, and does not keep it as data. Everything
// else a request carries (its body, and the other header fields, above
// all the metadata an object store keeps with an object) may be stored
// by the host and read back by the command, in pieces, encoded, or from
// another host of the same service, where no scrubbing of responses can
// find it whole (docs/tls-and-credentials.md#where-a-real-value-goes).
// Those parts get the real value only from the hosts a credential's
// bodyInjectHosts lists. The URL never does.
//
// carriesCredential is that line, and the only place it is drawn.

// A headerRule matches a header field name, lower-cased: the whole name
// (name), its start (prefix), one of its hyphen-separated parts
// (segment), or any part of it (word).
type headerRule struct {
	how  string // "name", "prefix", "segment" or "word"
	text string
	why  string
}

func (r headerRule) matches(name string) bool {
	switch r.how {
	case "name":
		return name == r.text
	case "prefix":
		return strings.HasPrefix(name, r.text)
	case "segment":
		for _, s := range strings.FieldsFunc(name, func(c rune) bool { return c == '-' || c == '_' }) {
			if s == r.text {
				return true
			}
		}
		return false
	}
	return strings.Contains(name, r.text)
}

// storedHeaders are header fields whose value a host keeps with what it
// stores and hands back (on GET and HEAD, in listings, to whoever may
// read the object), though their names may hold a credential's word.
// They are checked first: a field they match never carries a credential.
var storedHeaders = []headerRule{
	{"segment", "meta", "user metadata, kept with the object and served back on GET and HEAD (and, by some, in listings): " +
		"x-amz-meta-* (Amazon S3 and the stores that speak its API: MinIO, Ceph RGW, Cloudflare R2, Backblaze B2, Wasabi, DigitalOcean Spaces), " +
		"x-goog-meta-* (Google Cloud Storage), x-ms-meta-* (Azure Storage), " +
		"x-object-meta-*, x-container-meta-*, x-account-meta-* (OpenStack Swift), " +
		"x-oss-meta-* (Alibaba Cloud OSS), x-cos-meta-* (Tencent COS), x-obs-meta-* (Huawei OBS)"},
	{"prefix", "x-bz-info-", "Backblaze B2's file info, kept with the file and served back"},
	{"word", "kms-key", "the KMS key an object is encrypted with (x-amz-server-side-encryption-aws-kms-key-id, " +
		"x-goog-encryption-kms-key-name, x-cos-server-side-encryption-cos-kms-key-id), kept with the object and served back"},
	{"name", "x-oss-server-side-encryption-key-id", "Alibaba Cloud OSS's name for the KMS key of an object, kept and served back"},
}

// credentialHeaders are the header fields that carry credentials: by
// standard, or by the naming convention of the APIs that take a key or
// token in a header of their own.
var credentialHeaders = []headerRule{
	{"name", "authorization", "RFC 9110 §11.6.2: the user agent's credentials (Bearer, Basic, AWS4-HMAC-SHA256, …)"},
	{"name", "cookie", "RFC 6265 §5.4: the session a server set"},
	{"word", "auth", "X-Auth-Token, X-Sentry-Auth, X-Registry-Auth"},
	{"word", "token", "Private-Token, X-Vault-Token, X-Amz-Security-Token, X-Shopify-Access-Token"},
	{"word", "key", "X-Api-Key, X-Goog-Api-Key, Ocp-Apim-Subscription-Key, x-amz-server-side-encryption-customer-key"},
	{"word", "secret", "X-Hasura-Admin-Secret, X-Client-Secret"},
	{"word", "password", "X-Password"},
	{"word", "passwd", "X-Passwd"},
	{"word", "credential", "X-Credential"},
	{"word", "session", "X-Session-Token, X-Session-Id"},
	{"word", "signature", "X-Signature: a request signed with a secret"},
}

// carriesCredential reports whether a request header field of this name
// carries a credential, so that a real value may be swapped into it for
// any inject host.
func carriesCredential(name string) bool {
	return credentialRule(name) != nil
}

// credentialRule is the rule by which a header field of this name
// carries a credential, or nil when it does not (no rule matches, or a
// storedHeaders rule matches first).
func credentialRule(name string) *headerRule {
	name = strings.ToLower(name)
	for i := range storedHeaders {
		if storedHeaders[i].matches(name) {
			return nil
		}
	}
	for i := range credentialHeaders {
		if credentialHeaders[i].matches(name) {
			return &credentialHeaders[i]
		}
	}
	return nil
}

package proxy

import "strings"

// Where a real value may go. A masked credential's real value is
// swapped into a request only where a credential belongs: the header
// fields that carry credentials. Everything else a request carries (its
// body, and the other header fields, above all what a host keeps with
// what it stores) may be kept by the host and read back by the command,
// in pieces, encoded, or from another host of the same service, where no
// scrubbing of responses can find it whole
// (docs/tls-and-credentials.md#where-a-real-value-goes). Those parts get
// the real value only from the hosts a credential's bodyInjectHosts
// lists. The URL never does.
//
// The command picks the header names, so the line is an allow-list over
// names, read in three steps (credentialRule):
//
//  1. A name that notCredentialHeaders matches carries no credential,
//     whatever word it holds: what object stores keep with an object and
//     serve back (user metadata, file info, the name of a KMS key), and
//     the names that carry a value the host keeps to recognise a request
//     or to label data (an idempotency key, a request or correlation id,
//     a name).
//  2. A name that credentialHeaders matches carries one: Authorization,
//     Proxy-Authorization and Cookie by name, and a name one of whose
//     parts (split on '-' and '_') is a credential word: auth, token, key,
//     apikey, secret, password, credential, session, signature and their
//     listed spellings. A word inside a part does not count: X-Author,
//     X-Keywords and X-Tokenizer carry no credential.
//  3. Every other name carries none.
//
// carriesCredential is that line, and the only place it is drawn.

// A headerRule matches a header field name, lower-cased: the whole name
// (name), its start (prefix), or one of its parts split on '-' and '_'
// (part).
type headerRule struct {
	how  string // "name", "prefix" or "part"
	text string
	why  string
}

func (r headerRule) matches(name string) bool {
	switch r.how {
	case "name":
		return name == r.text
	case "prefix":
		return strings.HasPrefix(name, r.text)
	case "part":
		for _, s := range strings.FieldsFunc(name, func(c rune) bool { return c == '-' || c == '_' }) {
			if s == r.text {
				return true
			}
		}
		return false
	}
	panic("proxy: headerRule " + r.how + " " + r.text + ": no such kind of rule")
}

// notCredentialHeaders are header fields whose value a host keeps, as
// data, with what it stores or with its record of the request, and
// hands back (on GET and HEAD, in listings, in events and webhooks, to
// whoever may read them), though their names may hold a credential's
// word. They are checked first: a field they match never carries a
// credential.
var notCredentialHeaders = []headerRule{
	{"part", "meta", "user metadata, kept with the object and served back on GET and HEAD (and, by some, in listings): " +
		"x-amz-meta-* (Amazon S3 and the stores that speak its API: MinIO, Ceph RGW, Cloudflare R2, Backblaze B2, Wasabi, DigitalOcean Spaces), " +
		"x-goog-meta-* (Google Cloud Storage), x-ms-meta-* (Azure Storage), " +
		"x-object-meta-*, x-container-meta-*, x-account-meta-* (OpenStack Swift), " +
		"x-oss-meta-* (Alibaba Cloud OSS), x-cos-meta-* (Tencent COS), x-obs-meta-* (Huawei OBS), x-bce-meta-* (Baidu BOS), " +
		"x-qn-meta-* (Qiniu), x-upyun-meta-* (UpYun), x-archive-meta-* (Internet Archive), x-emc-meta (Dell EMC Atmos), x-meta-*"},
	{"part", "sysmeta", "OpenStack Swift's system metadata (x-object-sysmeta-*, x-container-sysmeta-*), kept with the object"},
	{"prefix", "x-bz-info-", "Backblaze B2's file info, kept with the file and served back"},
	{"part", "kms", "the KMS key an object is encrypted with (x-amz-server-side-encryption-aws-kms-key-id, " +
		"x-goog-encryption-kms-key-name, x-cos-server-side-encryption-cos-kms-key-id), kept with the object and served back"},
	{"name", "x-oss-server-side-encryption-key-id", "Alibaba Cloud OSS's name for the KMS key of an object, kept and served back"},
	{"part", "idempotency", "an idempotency key (Idempotency-Key, X-Idempotency-Key, I-Twilio-Idempotency-Token): " +
		"the host keeps it to recognise a retried request, and serves it back (Stripe, in the event of the request and its webhooks)"},
	{"part", "idempotent", "an idempotency key by another spelling (X-Idempotent-Key)"},
	{"part", "request", "a request's id or key (X-Request-Id, X-Client-Request-Id, X-Request-Key): kept in the host's logs and echoed in its responses"},
	{"part", "correlation", "a correlation id or key (X-Correlation-Id, X-Correlation-Token): kept in logs and echoed in responses"},
	{"part", "trace", "a trace id or key (X-Trace-Id, X-Cloud-Trace-Context): kept in logs and echoed in responses"},
	{"part", "name", "the name of something (X-Session-Name, X-Key-Name, X-Secret-Name): a label the host keeps as data"},
	{"name", "sec-websocket-key", "RFC 6455 §11.3.1: a handshake nonce, not a credential, answered with its hash in Sec-WebSocket-Accept"},
}

// credentialHeaders are the header fields that carry credentials: by
// standard, or by the naming convention of the APIs that take a key or
// token in a header of their own.
var credentialHeaders = []headerRule{
	{"name", "authorization", "RFC 9110 §11.6.2: the user agent's credentials (Bearer, Basic, AWS4-HMAC-SHA256, …)"},
	{"name", "proxy-authorization", "RFC 9110 §11.7.2: credentials for a proxy (hop-by-hop: never forwarded anyway)"},
	{"name", "cookie", "RFC 6265 §5.4: the session a server set"},
	{"part", "auth", "X-Auth-Token, X-Sentry-Auth, X-Registry-Auth, X-Auth-Key"},
	{"part", "authorization", "X-Authorization, X-Forwarded-Authorization"},
	{"part", "authentication", "X-Authentication"},
	{"part", "token", "Private-Token, X-Vault-Token, X-Amz-Security-Token, X-Shopify-Access-Token, Circle-Token"},
	{"part", "key", "X-Api-Key, X-Goog-Api-Key, Ocp-Apim-Subscription-Key, x-amz-server-side-encryption-customer-key"},
	{"part", "apikey", "Apikey, X-Apikey, X-ApiKey"},
	{"part", "secret", "X-Hasura-Admin-Secret, X-Client-Secret"},
	{"part", "password", "X-Password"},
	{"part", "passwd", "X-Passwd"},
	{"part", "credential", "X-Credential"},
	{"part", "credentials", "X-Credentials"},
	{"part", "session", "X-Session-Token, X-Session-Id"},
	{"part", "signature", "X-Signature, Signature: a request signed with a secret"},
}

// carriesCredential reports whether a request header field of this name
// carries a credential, so that a real value may be swapped into it for
// any inject host.
func carriesCredential(name string) bool {
	return credentialRule(name) != nil
}

// credentialRule is the rule by which a header field of this name
// carries a credential, or nil when it does not (no rule matches, or a
// notCredentialHeaders rule matches first).
func credentialRule(name string) *headerRule {
	name = strings.ToLower(name)
	for i := range notCredentialHeaders {
		if notCredentialHeaders[i].matches(name) {
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

// Package wfp emits the Windows artifact of a policy: a declarative plan of
// WFP filters, the sandbox account, ACL grants and the write-restricted
// token, for review. Nothing in this project executes it yet.
//
// Not built yet: see the issue "Windows: WFP filter and ACL plan emitter".
package wfp

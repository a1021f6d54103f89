package credentials

// Masked credentials (credentials.envVars, credentials.files): the
// command sees stand-ins, and the proxies swap the secrets back in on the
// way to the hosts each may go to.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/secrets"
)

// maxMaskedFile is the largest credential file srt masks; a larger one is
// hidden instead.
const maxMaskedFile = 16 << 20

// A Masking holds what a run needs of its masked credentials: the
// command's environment, the value each masked variable is set to, and
// the injector the proxies swap the secrets back with.
type Masking struct {
	env []string
	// values are what the masked variables are set to in the sandbox;
	// a variable not listed is left as env has it.
	values  map[string]string
	inject  *proxy.Injector
	allowed policy.HostList
	warn    func(string)
}

// MaskEnv prepares the masked and removed variables of a run: env
// without the removed ones and with every masked value's secrets replaced
// by stand-ins (so that no process srt starts holds a real value). A
// masked variable that is not set is refused: the command would run
// without the credential it was configured for. When extract or decode
// finds no secret, onExtractNoMatch decides: warn (the value stays, and
// warn says so), deny (the variable is removed) or error. allowed are
// the hosts a secret goes to when its rule names none (injectHosts).
func MaskEnv(env []string, e policy.Env, allowed policy.HostList, warn func(string)) (*Masking, error) {
	m := &Masking{values: map[string]string{}, allowed: allowed, warn: warn,
		inject: &proxy.Injector{Plaintext: e.AllowPlaintextInject}}
	for _, u := range e.Unset {
		env = unsetEnv(env, u.Name)
	}
	if err := checkAWSPairs(e, env); err != nil {
		return nil, err
	}
	whole := map[string]proxy.Secret{} // the variables masked whole, for the AWS pairs
	for _, r := range e.Mask {
		key := where(r.Origin, r.Origin.Key)
		real, ok := lookupEnv(env, r.Name)
		if !ok {
			return nil, fmt.Errorf("%s: %s is masked but not set in srt's environment; set it, or remove the entry (the command would run without the credential)", key, r.Name)
		}
		if real == "" {
			m.values[r.Name] = ""
			continue
		}
		masked, added, err := m.mask(real, r.Masking, false, r.Origin.Key, key, r.Name)
		if len(added) == 1 && added[0].Real == real {
			whole[r.Name] = added[0]
		}
		switch {
		case errors.Is(err, errLeave):
			continue
		case errors.Is(err, errHide):
			env = unsetEnv(env, r.Name)
			continue
		case err != nil:
			return nil, err
		}
		m.values[r.Name] = masked
		env = setEnv(env, r.Name, masked)
	}
	m.inject.AWS = awsKeys(e, whole)
	m.env = env
	return m, nil
}

// Env is the command's environment: without the removed variables, and
// with the masked ones' stand-ins.
func (m *Masking) Env() []string { return m.env }

// Value is what the masked variable name is set to in the sandbox; false
// when it is not masked, or is left as srt's environment has it.
func (m *Masking) Value(name string) (string, bool) {
	v, ok := m.values[name]
	return v, ok
}

// AWSKeyNames name the AWS keys the proxy re-signs SigV4 requests with
// (credentials.awsPairs), one for each pair.
func (m *Masking) AWSKeyNames() []string {
	var names []string
	for _, k := range m.inject.AWS {
		names = append(names, k.Name)
	}
	return names
}

var (
	errLeave = errors.New("nothing to mask")
	errHide  = errors.New("hidden")
)

// mask returns value with its secrets replaced and adds them to the
// injector (added). errLeave and errHide say what onExtractNoMatch chose
// when nothing was found; setting is the JSON path of the entry, key the
// entry with its place in the file, and what names the credential, for
// messages.
func (m *Masking) mask(value string, r policy.Masking, file bool, setting, key, what string) (text string, added []proxy.Secret, err error) {
	spec := secrets.Spec{Extract: r.Extract, Decode: r.Decode, MaskClaims: r.MaskClaims, Duplicates: r.MaskDuplicates, File: file}
	masked, err := secrets.Mask(value, spec, Sentinel)
	if errors.Is(err, secrets.ErrNoMatch) {
		switch r.OnExtractNoMatch.Resolved() {
		case policy.NoMatchError:
			return "", nil, fmt.Errorf("%s: %s: %v, and onExtractNoMatch is \"error\"; fix extract or decode, or set onExtractNoMatch to \"warn\" or \"deny\"", key, what, err)
		case policy.NoMatchDeny:
			m.warn(fmt.Sprintf("%s: %s: %v; hidden from the command (onExtractNoMatch \"deny\")", key, what, err))
			return "", nil, errHide
		case policy.NoMatchWarn:
		default:
			return "", nil, fmt.Errorf("%s: %s: %v, and onExtractNoMatch is %q, which this srt does not know: compile the plan again", key, what, err, r.OnExtractNoMatch)
		}
		m.warn(fmt.Sprintf("%s: %s: %v; the command sees it unmasked (onExtractNoMatch \"warn\"; set it to \"deny\" to hide it instead)", key, what, err))
		return "", nil, errLeave
	}
	if err != nil {
		return "", nil, fmt.Errorf("%s: %s: %w", key, what, err)
	}
	scope := r.InjectScope(m.allowed)
	inject := func(host string) bool {
		_, ok := scope.Match(host, 0)
		return ok
	}
	// The real value goes into bodies and the header fields that carry
	// no credential only for the hosts bodyInjectHosts lists.
	var body func(string) bool
	if bodyScope := r.BodyInjectScope(); len(bodyScope) > 0 {
		body = func(host string) bool {
			_, ok := bodyScope.Match(host, 0)
			return ok
		}
	}
	for _, p := range masked.Pieces {
		added = append(added, proxy.Secret{Name: what, Setting: setting, Sentinel: p.StandIn, Real: p.Real, Inject: inject, BodyInject: body})
	}
	m.inject.Secrets = append(m.inject.Secrets, added...)
	return masked.Text, added, nil
}

// Injector is the run's injector, or nil when nothing is masked. The
// caller may set its SigV4 before the proxies use it.
func (m *Masking) Injector() *proxy.Injector {
	if len(m.inject.Secrets) == 0 {
		return nil
	}
	return m.inject
}

// FileCopier returns the resolver's MaskedCopy (resolve.Host) for the
// credential files of fs: it writes the masked copy of a file into a
// scratch directory that dir makes on first use (removed with the run).
func (m *Masking) FileCopier(fs policy.Filesystem, dir func() (string, error)) func(operand, path string) (string, error) {
	n := 0
	return func(operand, path string) (string, error) {
		var rule *policy.PathRule
		for i := range fs.CredentialMasks {
			if fs.CredentialMasks[i].Path.String() == operand {
				rule = &fs.CredentialMasks[i]
				break
			}
		}
		// A file that cannot be masked is hidden, and the user is told:
		// the command will not find what the settings meant it to read.
		hidden := func(key string, err error) (string, error) {
			m.warn(fmt.Sprintf("%s: %s cannot be masked (%v); hidden from the command instead", key, path, err))
			return "", err
		}
		switch {
		case rule == nil:
			return hidden(operand, errors.New("no credentials.files rule names it"))
		case rule.Mask == nil:
			return hidden(where(rule.Origin, rule.Origin.Key), errors.New("the plan does not say what of it is secret: it was compiled by an older srtc; install srt and srtc from the same version, or compile the plan again"))
		}
		key := where(rule.Origin, rule.Origin.Key)
		f, err := os.Open(path)
		if err != nil {
			return hidden(key, err)
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxMaskedFile+1))
		if err != nil {
			return hidden(key, err)
		}
		if len(data) > maxMaskedFile {
			return hidden(key, fmt.Errorf("larger than %d MiB", maxMaskedFile>>20))
		}
		masked, _, err := m.mask(string(data), *rule.Mask, true, rule.Origin.Key, key, path)
		switch {
		case errors.Is(err, errLeave):
			return "", nil
		case errors.Is(err, errHide):
			return "", err
		case err != nil:
			return "", &resolve.StopError{Err: err}
		}
		d, err := dir()
		if err != nil {
			return "", err
		}
		n++
		out := filepath.Join(d, fmt.Sprintf("%d-%s", n, filepath.Base(path)))
		if err := os.WriteFile(out, []byte(masked), 0o444); err != nil {
			return "", err
		}
		return out, nil
	}
}

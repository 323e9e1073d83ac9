package cpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/diskcache"
)

// Flags are the compiler flags of every build. No fast-math: reductions and
// the flow must be reproducible; -ffp-contract=off keeps a*b+c two roundings
// whatever the target, and without -march=native the object is portable, so
// the cache key need not name the host CPU.
var Flags = []string{"-std=gnu99", "-O3", "-fPIC", "-shared", "-fno-fast-math", "-ffp-contract=off", "-fvisibility=hidden"}

func (b *Backend) compiler() []string {
	cc := b.opt.CC
	if cc == "" {
		cc = os.Getenv("CC")
	}
	if cc == "" {
		cc = "cc"
	}
	return strings.Fields(cc)
}

// cacheDir is Options.CacheDir, else the cpu/ folder of the one cache root
// (internal/diskcache: $FIELDGO_CACHE or os.UserCacheDir()/fieldgo).
func (b *Backend) cacheDir() (string, error) {
	if b.opt.CacheDir != "" {
		return b.opt.CacheDir, nil
	}
	d, err := diskcache.Dir(diskcache.CPU)
	if err != nil {
		return "", errs.Wrap(errs.Backend, err, "no cache directory (set FIELDGO_CACHE)")
	}
	return d, nil
}

var versions sync.Map // compiler command -> `cc --version` output

func compilerVersion(cc []string) (string, error) {
	key := strings.Join(cc, " ")
	if v, ok := versions.Load(key); ok {
		return v.(string), nil
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		return "", errs.New(errs.Backend, "no C compiler: %q not found (install cc or set $CC)", cc[0])
	}
	out, err := exec.Command(cc[0], append(cc[1:], "--version")...).CombinedOutput()
	if err != nil {
		return "", errs.New(errs.Backend, "%s --version failed: %v: %s", key, err, out)
	}
	versions.Store(key, string(out))
	return string(out), nil
}

// key hashes what determines the object: source, compiler, flags, version.
func (b *Backend) key(source string) (string, error) {
	cc := b.compiler()
	ver, err := compilerVersion(cc)
	if err != nil {
		return "", err
	}
	return diskcache.Key(diskcache.CPU, source, strings.Join(cc, " "), strings.Join(Flags, " "), ver), nil
}

// build returns the path of a verified shared object for source, and whether
// it came from the cache (compiled now if the cache has no intact entry). An
// entry is object + ".sha256" holding the object's hash; the checksum is
// written (atomically, like the object) last, so a missing, truncated or
// corrupt object fails verification and is rebuilt.
func (b *Backend) build(source string) (path string, cached bool, err error) {
	if path, err = b.objectPath(source); err != nil {
		return "", false, err
	}
	if verify(path) {
		return path, true, nil
	}
	path, err = b.compile(source, path)
	return path, false, err
}

func (b *Backend) rebuild(source string) (string, error) {
	path, err := b.objectPath(source)
	if err != nil {
		return "", err
	}
	return b.compile(source, path)
}

func (b *Backend) objectPath(source string) (string, error) {
	key, err := b.key(source)
	if err != nil {
		return "", err
	}
	dir, err := b.cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, key+".so"), nil
}

func verify(path string) bool {
	want, err := os.ReadFile(path + ".sha256")
	if err != nil {
		return false
	}
	obj, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(obj)
	return bytes.Equal(bytes.TrimSpace(want), []byte(hex.EncodeToString(sum[:])))
}

func (b *Backend) compile(source, path string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errs.Wrap(errs.Backend, err, "cannot create the kernel cache %s", dir)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", errs.Wrap(errs.Backend, err, "cannot write to the kernel cache %s", dir)
	}
	defer os.RemoveAll(tmp)
	srcPath := filepath.Join(tmp, "unit.c")
	if err := os.WriteFile(srcPath, []byte(source), 0o644); err != nil {
		return "", errs.Wrap(errs.Backend, err, "cannot write %s", srcPath)
	}
	cc := b.compiler()
	objTmp := filepath.Join(tmp, "unit.so")
	args := append(append(append([]string{}, cc[1:]...), Flags...), "-o", objTmp, srcPath, "-lm")
	cmd := exec.Command(cc[0], args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); ok {
			return "", errs.New(errs.Compile, "the C compiler rejected the kernels (%s %s):\n%s",
				strings.Join(cc, " "), strings.Join(Flags, " "), log.String())
		}
		return "", errs.Wrap(errs.Backend, err, "cannot run the C compiler %q", cc[0])
	}
	obj, err := os.ReadFile(objTmp)
	if err != nil {
		return "", errs.Wrap(errs.Backend, err, "compiled object vanished")
	}
	sum := sha256.Sum256(obj)
	// Object first, checksum last: a reader sees either no entry or a whole one.
	if err := diskcache.WriteAtomic(path, obj); err != nil {
		return "", errs.Wrap(errs.Backend, err, "cannot install %s", path)
	}
	if err := diskcache.WriteAtomic(path+".sha256", []byte(hex.EncodeToString(sum[:])+"\n")); err != nil {
		return "", errs.Wrap(errs.Backend, err, "cannot install %s.sha256", path)
	}
	return path, nil
}

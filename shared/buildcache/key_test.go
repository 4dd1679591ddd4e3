package buildcache

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func validKey() Key {
	return Key{Org: kiln.NewID(), Project: kiln.NewID(), Ref: "main", Platform: "Win64", Engine: "5.3"}
}

func TestKeyValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(k *Key)
		ok     bool
	}{
		{"valid", func(k *Key) {}, true},
		{"branch with slashes", func(k *Key) { k.Ref = "feature/x" }, true},
		{"perforce stream", func(k *Key) { k.Ref = "//depot/main" }, true},
		{"unicode and spaces", func(k *Key) { k.Ref = "branche été ../..\\x" }, true},
		{"no org", func(k *Key) { k.Org = "" }, false},
		{"org not an id", func(k *Key) { k.Org = "acme/x" }, false},
		{"org with dots", func(k *Key) { k.Org = "..kkkkkkkkkkkkkkkkkkkkkk" }, false},
		{"project not an id", func(k *Key) { k.Project = "p1" }, false},
		{"no ref", func(k *Key) { k.Ref = "" }, false},
		{"no platform", func(k *Key) { k.Platform = "" }, false},
		{"no engine", func(k *Key) { k.Engine = "" }, false},
		{"NUL", func(k *Key) { k.Engine = "5.3\x00" }, false},
		{"not UTF-8", func(k *Key) { k.Platform = "\xff" }, false},
		{"too long", func(k *Key) { k.Ref = strings.Repeat("r", maxFieldLen+1) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := validKey()
			tc.change(&k)
			err := k.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidKey) {
					t.Errorf("error %v is not ErrInvalidKey", err)
				}
				if k.Prefix() != "" {
					t.Errorf("Prefix of an invalid key = %q, want empty", k.Prefix())
				}
				return
			}
			p := k.Prefix()
			if !strings.HasPrefix(p, "caches/"+k.Org+"/"+k.Project+"/") || !strings.HasPrefix(p, OrgPrefix(k.Org)) || !strings.HasSuffix(p, "/") {
				t.Errorf("Prefix %q does not start with caches/<org>/<project>/ or end with /", p)
			}
			obj, err := ObjectKey(k, kiln.NewID())
			if err != nil {
				t.Fatal(err)
			}
			if err := artifacts.ValidateKey(obj); err != nil {
				t.Errorf("object key %q: %v", obj, err)
			}
			if !strings.HasPrefix(obj, p) || !strings.HasSuffix(obj, ".tar.zst") {
				t.Errorf("object key %q not <prefix><build>.tar.zst", obj)
			}
		})
	}
}

func TestObjectKeyRefusesBadBuildIDs(t *testing.T) {
	for _, id := range []string{"", "b1", "../kkkkkkkkkkkkkkkkkkkkkk", "kkkkkkkkkkkkkkkkkkkkkk/x"} {
		if _, err := ObjectKey(validKey(), id); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ObjectKey(%q) = %v, want ErrInvalidKey", id, err)
		}
	}
	if _, err := ObjectKey(Key{}, kiln.NewID()); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("ObjectKey of an empty key = %v, want ErrInvalidKey", err)
	}
}

// Keys that differ in any field never share a prefix, nor does one prefix start another, even
// when the fields' texts would join into the same string.
func TestPrefixesNeverShared(t *testing.T) {
	base := validKey()
	with := func(f func(k *Key)) Key { k := base; f(&k); return k }
	keys := []Key{
		base,
		with(func(k *Key) { k.Ref = "main2" }),
		with(func(k *Key) { k.Ref = "feature/x" }),
		with(func(k *Key) { k.Ref = "feature" }),
		with(func(k *Key) { k.Ref = "mainW"; k.Platform = "in64" }), // "main"+"Win64" joined differently
		with(func(k *Key) { k.Platform = "Linux" }),
		with(func(k *Key) { k.Engine = "5.4" }),
		with(func(k *Key) { k.Engine = "5.3.1" }),
		with(func(k *Key) { k.Project = kiln.NewID() }),
		with(func(k *Key) { k.Org = kiln.NewID() }),
	}
	for i, a := range keys {
		for j, b := range keys {
			if i != j && strings.HasPrefix(a.Prefix(), b.Prefix()) {
				t.Errorf("prefix of %v (%s) starts with that of %v (%s)", a, a.Prefix(), b, b.Prefix())
			}
		}
	}
}

func TestOrgPrefixesNeverNest(t *testing.T) {
	orgs := []string{
		"kAAAAAAAAAAAAAAAAAAAAAAA", "kAAAAAAAAAAAAAAAAAAAAAAB", "-AAAAAAAAAAAAAAAAAAAAAAA", "_AAAAAAAAAAAAAAAAAAAAAAA",
		kiln.NewID(), kiln.NewID(),
	}
	for _, a := range orgs {
		pa := OrgPrefix(a)
		if pa != "caches/"+a+"/" {
			t.Fatalf("OrgPrefix(%q) = %q", a, pa)
		}
		k := validKey()
		k.Org = a
		for _, b := range orgs {
			if a == b {
				continue
			}
			if pb := OrgPrefix(b); strings.HasPrefix(pb, pa) || strings.HasPrefix(k.Prefix(), pb) {
				t.Errorf("org %s's prefixes (%s, %s) and org %s's (%s) nest", a, pa, k.Prefix(), b, pb)
			}
		}
	}
	for _, bad := range []string{"", "k1", "kAAAAAAAAAAAAAAAAAAAAAA/", "../AAAAAAAAAAAAAAAAAAAAAA"} {
		if p := OrgPrefix(bad); p != "" {
			t.Errorf("OrgPrefix(%q) = %q, want empty", bad, p)
		}
	}
}

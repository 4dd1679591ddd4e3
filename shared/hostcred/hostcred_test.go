package hostcred

import (
	"strings"
	"testing"
)

func TestNewParseMatches(t *testing.T) {
	cred, hash, err := New("org1", "build1")
	if err != nil {
		t.Fatal(err)
	}
	org, build, err := Parse(cred)
	if err != nil || org != "org1" || build != "build1" {
		t.Fatalf("Parse = %q, %q, %v; want org1, build1", org, build, err)
	}
	if !Matches(cred, hash) {
		t.Fatal("the credential does not match its own hash")
	}
	if strings.Contains(hash, cred) || len(hash) != 64 {
		t.Fatalf("hash %q is not a SHA-256 of the credential", hash)
	}
	other, otherHash, _ := New("org1", "build1")
	if other == cred || Matches(other, hash) || Matches(cred, otherHash) {
		t.Fatal("two credentials of the same build are interchangeable")
	}
	if Matches(cred, "") {
		t.Fatal("a build without a hash accepts a credential")
	}
}

func TestParseRefuses(t *testing.T) {
	cred, _, _ := New("org1", "build1")
	for _, bad := range []string{
		"", "kbh.", "kiln_abc", "kbh.org1.build1", "kbh.org1.build1.short", "kbh..build1." + cred[len(cred)-43:],
		strings.Replace(cred, "kbh.", "kbx.", 1), cred + ".extra", cred[:len(cred)-1],
	} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted a malformed credential", bad)
		}
	}
	if _, _, err := New("org.1", "b"); err == nil {
		t.Error("New accepted an id with a dot")
	}
}

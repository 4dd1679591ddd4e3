package githubtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Repo is a repository of the fake, backed by a bare git repository on disk.
type Repo struct {
	ID             int64
	FullName       string
	Private        bool
	DefaultBranch  string
	InstallationID int64
	// Dir is the bare repository, made on first use.
	Dir string

	s       *Server
	initted sync.Once
	initErr error
}

// AddInstallation adds an installation of the App on an organization account.
func (s *Server) AddInstallation(id int64, account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insts[id] = &installation{id: id, account: account}
}

// AddRepo creates an empty bare repository owned by an installation. Its default branch exists
// once a commit is made on it.
func (s *Server) AddRepo(installationID int64, fullName string, private bool, defaultBranch string) *Repo {
	s.t.Helper()
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		s.fatalf("AddRepo: %q is not owner/name", fullName)
	}
	r := &Repo{FullName: fullName, Private: private, DefaultBranch: defaultBranch,
		InstallationID: installationID, Dir: filepath.Join(s.root, owner, name+".git"), s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.insts[installationID]; !ok {
		s.fatalf("AddRepo: no installation %d", installationID)
	}
	r.ID = s.newID()
	s.repos[strings.ToLower(fullName)] = r
	s.order = append(s.order, r)
	return r
}

// initBare lays out an empty bare repository, as `git init --bare` would, without the cost of
// starting git. Repositories are laid out when first used: tests add many that nothing reads.
func initBare(dir, defaultBranch string) error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"HEAD":   "ref: refs/heads/" + defaultBranch + "\n",
		"config": "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ensure lays out the bare repository on first use.
func (r *Repo) ensure() error {
	r.initted.Do(func() { r.initErr = initBare(r.Dir, r.DefaultBranch) })
	return r.initErr
}

// Commit makes a real commit on branch: files (path → content) are written over the branch's
// current tree; a new branch starts from the default branch's head (or from nothing). It returns
// the commit sha.
func (r *Repo) Commit(branch, message, author string, files map[string]string) string {
	r.s.t.Helper()
	return r.writeCommit(branch, message, author, files, "100644")
}

// Head is the sha of branch's head commit ("" when there is no such branch).
func (r *Repo) Head(branch string) string {
	sha, err := r.revParse("refs/heads/" + branch + "^{commit}")
	if err != nil {
		return ""
	}
	return sha
}

// CommitSymlinks commits symbolic links on branch (path → target, git mode 120000), each
// replacing whatever the path held (a directory included), as a hostile repository can.
func (r *Repo) CommitSymlinks(branch, message, author string, links map[string]string) string {
	r.s.t.Helper()
	return r.writeCommit(branch, message, author, links, "120000")
}

// writeCommit writes entries (path → content) of one git mode over the branch's tree in one commit.
func (r *Repo) writeCommit(branch, message, author string, files map[string]string, mode string) string {
	r.s.t.Helper()
	parent, _ := r.revParse("refs/heads/" + branch)
	if parent == "" && branch != r.DefaultBranch {
		parent, _ = r.revParse("refs/heads/" + r.DefaultBranch)
	}
	// One git fast-import run writes the blobs, the tree and the commit.
	when := fmt.Sprintf("%d +0000", r.s.now().Unix())
	email := strings.ToLower(strings.Join(strings.Fields(author), ".")) + "@example.com"
	var in bytes.Buffer
	fmt.Fprintf(&in, "commit refs/heads/%s\n", branch)
	fmt.Fprintf(&in, "author %s <%s> %s\ncommitter %s <%s> %s\n", author, email, when, author, email, when)
	fmt.Fprintf(&in, "data %d\n%s\n", len(message), message)
	if parent != "" {
		fmt.Fprintf(&in, "from %s\n", parent)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if mode != "100644" {
			fmt.Fprintf(&in, "D %s\n", p)
		}
		fmt.Fprintf(&in, "M %s inline %s\ndata %d\n%s\n", mode, p, len(files[p]), files[p])
	}
	in.WriteString("done\n")
	if _, err := r.git(&in, "fast-import", "--quiet", "--done"); err != nil {
		r.s.fatalf("Commit: %v", err)
	}
	sha, err := r.revParse("refs/heads/" + branch)
	if err != nil {
		r.s.fatalf("Commit: %v", err)
	}
	return sha
}

// CreateBranches makes branches pointing at the commit from (a sha or a branch), in one git call.
func (r *Repo) CreateBranches(from string, names ...string) {
	r.s.t.Helper()
	sha, err := r.revParse(from + "^{commit}")
	if err != nil {
		r.s.fatalf("CreateBranches: %v", err)
	}
	var in bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&in, "create refs/heads/%s %s\n", n, sha)
	}
	if _, err := r.git(&in, "update-ref", "--stdin"); err != nil {
		r.s.fatalf("CreateBranches: %v", err)
	}
}

// ForcePush points branch at the commit to (a sha or a branch), as a force push does: commits
// only the old head reached leave the branch (the repository keeps them).
func (r *Repo) ForcePush(branch, to string) {
	r.s.t.Helper()
	sha, err := r.revParse(to + "^{commit}")
	if err != nil {
		r.s.fatalf("ForcePush: %v", err)
	}
	if _, err := r.git(nil, "update-ref", "refs/heads/"+branch, sha); err != nil {
		r.s.fatalf("ForcePush: %v", err)
	}
}

// DeleteBranch removes a branch; its commits stay in the repository.
func (r *Repo) DeleteBranch(branch string) {
	r.s.t.Helper()
	if _, err := r.git(nil, "update-ref", "-d", "refs/heads/"+branch); err != nil {
		r.s.fatalf("DeleteBranch: %v", err)
	}
}

// git runs git in the bare repository and returns its standard output.
func (r *Repo) git(stdin *bytes.Buffer, args ...string) ([]byte, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	cmd := exec.Command("git", append([]string{"--git-dir", r.Dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// revParse resolves a revision expression to an object sha.
func (r *Repo) revParse(rev string) (string, error) {
	out, err := r.git(nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// branches lists the branches and their head commits, sorted by name.
func (r *Repo) branches() ([][2]string, error) {
	out, err := r.git(nil, "for-each-ref", "--sort=refname", "--format=%(refname) %(objectname)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	var list [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		ref, sha, ok := strings.Cut(line, " ")
		if ok {
			list = append(list, [2]string{strings.TrimPrefix(ref, "refs/heads/"), sha})
		}
	}
	return list, nil
}

// commitInfo is what git log tells of one commit.
type commitInfo struct {
	SHA, Tree, Message                   string
	Parents                              []string
	AuthorName, AuthorEmail, AuthorDate  string
	CommitterName, CommitterEmail, CDate string
}

// commit reads a commit (any revision naming one: a sha or a branch).
func (r *Repo) commit(rev string) (*commitInfo, error) {
	sha, err := r.revParse(rev + "^{commit}")
	if err != nil {
		return nil, err
	}
	out, err := r.git(nil, "log", "-1", "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
	if err != nil {
		return nil, err
	}
	f := strings.SplitN(string(out), "\x00", 10)
	if len(f) != 10 {
		return nil, fmt.Errorf("git log: unexpected output %q", out)
	}
	return &commitInfo{SHA: f[0], Tree: f[1], Parents: strings.Fields(f[2]), AuthorName: f[3],
		AuthorEmail: f[4], AuthorDate: f[5], CommitterName: f[6], CommitterEmail: f[7], CDate: f[8],
		Message: strings.TrimRight(f[9], "\n")}, nil
}

// treeEntry is one line of git ls-tree -l.
type treeEntry struct {
	Mode, Type, SHA, Path string
	Size                  int
}

// lsTree lists a tree (any revision naming one), recursively with the trees themselves when
// recursive is set.
func (r *Repo) lsTree(treeish string, recursive bool) ([]treeEntry, error) {
	args := []string{"ls-tree", "-z", "-l"}
	if recursive {
		args = append(args, "-r", "-t")
	}
	out, err := r.git(nil, append(args, "--end-of-options", treeish)...)
	if err != nil {
		return nil, err
	}
	var entries []treeEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", rec)
		}
		e := treeEntry{Mode: f[0], Type: f[1], SHA: f[2], Path: path}
		fmt.Sscanf(f[3], "%d", &e.Size)
		entries = append(entries, e)
	}
	return entries, nil
}

// catFile returns an object's type and content.
func (r *Repo) catFile(sha string) (string, []byte, error) {
	typ, err := r.git(nil, "cat-file", "-t", sha)
	if err != nil {
		return "", nil, err
	}
	t := strings.TrimSpace(string(typ))
	data, err := r.git(nil, "cat-file", t, sha)
	return t, data, err
}

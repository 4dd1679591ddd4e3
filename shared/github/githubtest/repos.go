package githubtest

import (
	"encoding/base64"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// maxContentSize is where GitHub's contents API stops inlining a file (encoding "none").
const maxContentSize = 1 << 20

func cutFullName(fullName string) (owner, name string, ok bool) {
	return strings.Cut(fullName, "/")
}

// repo finds a repository by full name, ignoring case like GitHub.
func (s *Server) repo(fullName string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)]
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if ok {
		writeJSON(w, http.StatusOK, s.repoJSON(repo))
	}
}

func (s *Server) listBranches(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok {
		return
	}
	refs, err := repo.branches()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	lo, hi := page(w, r, len(refs))
	list := []*github.Branch{}
	for _, ref := range refs[lo:hi] {
		list = append(list, &github.Branch{
			Name:      github.String(ref[0]),
			Commit:    &github.RepositoryCommit{SHA: github.String(ref[1]), URL: github.String(s.URL() + "repos/" + repo.FullName + "/commits/" + ref[1])},
			Protected: github.Bool(false),
		})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getBranch(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok {
		return
	}
	name := r.PathValue("branch")
	c, err := repo.commit("refs/heads/" + name)
	if err != nil {
		writeError(w, http.StatusNotFound, "Branch not found")
		return
	}
	writeJSON(w, http.StatusOK, &github.Branch{
		Name:      github.String(name),
		Commit:    s.commitJSON(repo, c),
		Protected: github.Bool(false),
	})
}

func (s *Server) getCommit(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok {
		return
	}
	c, err := repo.commit(r.PathValue("sha"))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+r.PathValue("sha"))
		return
	}
	writeJSON(w, http.StatusOK, s.commitJSON(repo, c))
}

func (s *Server) commitJSON(repo *Repo, c *commitInfo) *github.RepositoryCommit {
	ts := func(iso string) *github.Timestamp {
		t, _ := time.Parse(time.RFC3339, iso)
		return &github.Timestamp{Time: t}
	}
	api := s.URL() + "repos/" + repo.FullName
	var parents []*github.Commit
	for _, p := range c.Parents {
		parents = append(parents, &github.Commit{SHA: github.String(p), URL: github.String(api + "/commits/" + p)})
	}
	return &github.RepositoryCommit{
		SHA:     github.String(c.SHA),
		URL:     github.String(api + "/commits/" + c.SHA),
		HTMLURL: github.String(s.WebURL() + repo.FullName + "/commit/" + c.SHA),
		Parents: parents,
		Commit: &github.Commit{
			SHA:       github.String(c.SHA),
			Message:   github.String(c.Message),
			Author:    &github.CommitAuthor{Name: github.String(c.AuthorName), Email: github.String(c.AuthorEmail), Date: ts(c.AuthorDate)},
			Committer: &github.CommitAuthor{Name: github.String(c.CommitterName), Email: github.String(c.CommitterEmail), Date: ts(c.CDate)},
			Tree:      &github.Tree{SHA: github.String(c.Tree)},
		},
	}
}

// getTree lists a tree named by a tree sha, a commit sha or a branch; with ?recursive (any value,
// as on GitHub) the whole tree, truncated beyond SetTreeLimit's limit.
func (s *Server) getTree(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok {
		return
	}
	if refs, _ := repo.branches(); len(refs) == 0 {
		writeError(w, http.StatusConflict, "Git Repository is empty.")
		return
	}
	sha, err := repo.revParse(r.PathValue("sha") + "^{tree}")
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	recursive := r.URL.Query().Has("recursive")
	entries, err := repo.lsTree(sha, recursive)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	truncated := false
	if limit := int(s.treeLimit.Load()); recursive && limit > 0 && len(entries) > limit {
		entries, truncated = entries[:limit], true
	}
	api := s.URL() + "repos/" + repo.FullName + "/git/"
	tree := &github.Tree{SHA: github.String(sha), Entries: []*github.TreeEntry{}, Truncated: github.Bool(truncated)}
	for _, e := range entries {
		te := &github.TreeEntry{Path: github.String(e.Path), Mode: github.String(e.Mode), Type: github.String(e.Type), SHA: github.String(e.SHA)}
		if e.Type == "blob" {
			te.Size = github.Int(e.Size)
			te.URL = github.String(api + "blobs/" + e.SHA)
		} else {
			te.URL = github.String(api + "trees/" + e.SHA)
		}
		tree.Entries = append(tree.Entries, te)
	}
	writeJSON(w, http.StatusOK, struct {
		*github.Tree
		URL string `json:"url"`
	}{tree, api + "trees/" + sha})
}

// getContents answers a file (base64, as GitHub wraps it) or a directory listing at ?ref (the
// default branch when absent).
func (s *Server) getContents(w http.ResponseWriter, r *http.Request) {
	repo, ok := s.authRepo(w, r)
	if !ok {
		return
	}
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = repo.DefaultBranch
	}
	p := strings.Trim(r.PathValue("path"), "/")
	sha, err := repo.revParse(ref + ":" + p)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	typ, data, err := repo.catFile(sha)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if typ == "tree" {
		entries, err := repo.lsTree(sha, false)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		list := []*github.RepositoryContent{}
		for _, e := range entries {
			kind := map[string]string{"blob": "file", "tree": "dir", "commit": "submodule"}[e.Type]
			list = append(list, &github.RepositoryContent{Type: github.String(kind), Name: github.String(e.Path),
				Path: github.String(path.Join(p, e.Path)), SHA: github.String(e.SHA), Size: github.Int(e.Size)})
		}
		writeJSON(w, http.StatusOK, list)
		return
	}
	content, encoding := "", "none"
	if len(data) <= maxContentSize {
		content, encoding = wrapBase64(base64.StdEncoding.EncodeToString(data)), "base64"
	}
	writeJSON(w, http.StatusOK, &github.RepositoryContent{
		Type: github.String("file"), Encoding: github.String(encoding), Size: github.Int(len(data)),
		Name: github.String(path.Base(p)), Path: github.String(p), Content: github.String(content),
		SHA: github.String(sha), URL: github.String(s.URL() + "repos/" + repo.FullName + "/contents/" + p),
	})
}

// wrapBase64 breaks base64 text into lines, 60 characters a line as GitHub's contents API does.
func wrapBase64(s string) string {
	var b strings.Builder
	for len(s) > 60 {
		b.WriteString(s[:60] + "\n")
		s = s[60:]
	}
	b.WriteString(s)
	return b.String()
}

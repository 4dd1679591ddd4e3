package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The artifact's file name is <Project>-<Platform>-<BuildType>-<number>.tar.gz, the same in the
// download link's fileName, the served download's Content-Disposition and the presigned URL's
// file name; a build without a number, or whose project was deleted, falls back to its id.
func TestDownloadFileNames(t *testing.T) {
	cases := []struct {
		name    string
		project string // "" stores no project: the build gets no number
		deleted bool   // the project is deleted after the build
		want    func(b *kiln.Build) string
	}{
		{"numbered", "My Game: Reloaded", false, func(*kiln.Build) string { return "My_Game_Reloaded-Linux-Shipping-2.tar.gz" }},
		{"project deleted", "Shooter", true, func(b *kiln.Build) string { return b.ID + ".tar.gz" }},
		{"no number", "", false, func(b *kiln.Build) string { return b.ID + ".tar.gz" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newDownloadFixture(t)
			ctx, st := f.ctx, f.st
			b := *f.build
			b.ID = kiln.NewID()
			if c.project != "" {
				at := f.now()
				p := &kiln.Project{ID: b.ProjectID, OrganizationID: f.org, Name: c.project, SourceControl: kiln.SourceGitHub,
					RepoLink: "studio/game", InstallationID: "4242", DefaultBranch: "main", CreatedAt: at, UpdatedAt: at}
				if err := st.CreateProject(ctx, p, 0); err != nil {
					t.Fatal(err)
				}
				first := b
				first.ID = kiln.NewID()
				if err := st.CreateBuild(ctx, &first); err != nil { // takes number 1
					t.Fatal(err)
				}
			}
			if err := st.CreateBuild(ctx, &b); err != nil {
				t.Fatal(err)
			}
			if c.deleted {
				if err := st.DeleteProject(ctx, f.org, b.ProjectID); err != nil {
					t.Fatal(err)
				}
			}
			a := *f.artifact
			a.BuildID, a.Key = b.ID, f.org+"/"+b.ID+".tar.gz"
			if err := f.files.Put(ctx, a.Key, func(w io.Writer) error { _, err := io.WriteString(w, "tarball"); return err }); err != nil {
				t.Fatal(err)
			}
			if err := st.CreateArtifact(ctx, &a); err != nil {
				t.Fatal(err)
			}
			want := c.want(&b)
			var presigned []string
			presigning := presigningStore{Store: f.files, presign: func(key, filename string, lifetime time.Duration) (string, error) {
				presigned = append(presigned, filename)
				return "https://storage.example/" + key, nil
			}}
			srv := f.serve(t, f.files)
			link := downloadLink(t, srv.URL, b.ID, f.created.Token)
			if link.FileName != want {
				t.Errorf("fileName %q, want %q", link.FileName, want)
			}
			resp, err := http.Get(link.URL)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if got := resp.Header.Get("Content-Disposition"); got != `attachment; filename="`+want+`"` {
				t.Errorf("Content-Disposition %q, want the file %q", got, want)
			}

			srv.Config.Handler = f.handler(presigning, srv.URL)
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err = noFollow.Get(link.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusFound || len(presigned) != 1 || presigned[0] != want {
				t.Errorf("presigned: %d, file names %q, want %q", resp.StatusCode, presigned, want)
			}
		})
	}
}

// downloadLink asks GET /builds/:id/download with token.
func downloadLink(t *testing.T, base, buildID, token string) api.DownloadLink {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/builds/"+buildID+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d api.DownloadLink
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&d) != nil {
		t.Fatalf("GET /builds/%s/download: %d", buildID, resp.StatusCode)
	}
	return d
}

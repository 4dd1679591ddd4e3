package httpapi

import (
	"bytes"
	"html/template"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// installPageCSP is the Content-Security-Policy of the install callback's page: it has no script,
// style, image or form, and is never framed.
const installPageCSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var installPage = template.Must(template.New("install").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · kiln</title>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{- if .Fields}}
<ul>
{{- range .Fields}}
<li><code>{{.Name}}</code> {{.Problem}}</li>
{{- end}}
</ul>
{{- end}}
<p><a href="{{.Back}}">{{.BackText}}</a></p>
{{- if .RequestID}}
<p>Request id: <code>{{.RequestID}}</code></p>
{{- end}}
</main>
</body>
</html>
`))

// installPageData fills installPage.
type installPageData struct {
	Title, Message, Back, BackText, RequestID string
	Fields                                    []installPageField
}

type installPageField struct{ Name, Problem string }

// installAnswer answers the install callback: a page for the browser GitHub sent back, leading to
// the console's organization page, or JSON for a client whose Accept asks for it.
type installAnswer struct {
	json    bool
	console string // the console's organization page
}

// wantsJSON reports whether the request's Accept names application/json and not text/html.
func wantsJSON(r *http.Request) bool {
	var types []string
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil {
			types = append(types, mt)
		}
	}
	return slices.Contains(types, "application/json") && !slices.Contains(types, "text/html")
}

// linked answers a linked installation.
func (a installAnswer) linked(w http.ResponseWriter, org *kiln.Organization) {
	if a.json {
		writeJSON(w, http.StatusOK, map[string]any{
			"message":             "GitHub is linked to " + org.Name + "; you can close this page.",
			"organizationId":      org.ID,
			"integrationSettings": renderOrganization(org).IntegrationSettings,
		})
		return
	}
	writeInstallPage(w, http.StatusOK, installPageData{Title: "GitHub is linked", Back: a.console,
		Message:  "GitHub is linked to " + org.Name + ". Its repositories can now be added as projects; you can close this tab.",
		BackText: "Back to " + org.Name + " in the kiln console"})
}

// failed answers an install that linked nothing, with err's status and message.
func (a installAnswer) failed(w http.ResponseWriter, r *http.Request, err error) {
	if a.json {
		writeError(w, r, err)
		return
	}
	status, body := errorAnswer(r, err)
	page := installPageData{Title: "GitHub was not linked", Message: body.Message, RequestID: body.RequestID,
		Back: a.console, BackText: "Back to the kiln console to start again"}
	for name, problem := range body.Fields {
		page.Fields = append(page.Fields, installPageField{Name: name, Problem: problem})
	}
	slices.SortFunc(page.Fields, func(x, y installPageField) int { return strings.Compare(x.Name, y.Name) })
	writeInstallPage(w, status, page)
}

// writeInstallPage renders installPage with the console's protective headers.
func writeInstallPage(w http.ResponseWriter, status int, data installPageData) {
	var b bytes.Buffer
	if err := installPage.Execute(&b, data); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", installPageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

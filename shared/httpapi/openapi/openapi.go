// Package openapi holds kiln's OpenAPI 3.1 document: openapi.yaml in this directory is the one
// source (docs/openapi.yaml is a symlink to it). It is embedded, converted to JSON once, and
// served at GET /openapi.json by Handler. Package openapitest checks real traffic against it.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var document []byte

// YAML returns the document as written.
func YAML() []byte { return bytes.Clone(document) }

// JSON returns the document as JSON, with the keys in the order the YAML gives them. The package's
// tests make sure the embedded YAML converts; JSON panics if it does not.
func JSON() []byte { return bytes.Clone(converted().json) }

type jsonDoc struct {
	json []byte
	etag string
}

var converted = sync.OnceValue(func() jsonDoc {
	j, err := ToJSON(document)
	if err != nil {
		panic("openapi: the embedded openapi.yaml does not convert to JSON: " + err.Error())
	}
	sum := sha256.Sum256(j)
	return jsonDoc{json: j, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
})

// Handler serves the document as application/json, with an ETag (so If-None-Match answers 304)
// and HEAD support. It needs no authentication.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := converted()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", d.etag)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(d.json))
	})
}

// ToJSON converts a YAML document to indented JSON, keeping the order of mapping keys. It accepts
// the JSON-compatible subset of YAML: string, number, boolean and null scalars, sequences, and
// mappings whose keys are scalars (written as JSON strings); anchors and aliases are followed, but
// merge keys (<<) are refused because OpenAPI tools do not agree on them.
func ToJSON(y []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(y, &root); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeNode(&b, &root, 0); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeNode(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 200 {
		return fmt.Errorf("line %d: nesting too deep (an alias cycle?)", n.Line)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("want one YAML document, got %d", len(n.Content))
		}
		return writeNode(b, n.Content[0], depth+1)
	case yaml.AliasNode:
		return writeNode(b, n.Alias, depth+1)
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeNode(b, c, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			if k.Tag == "!!merge" || k.Value == "<<" && k.Style == 0 {
				return fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeNode(b, v, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.ScalarNode:
		return writeScalar(b, n)
	}
	return fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str":
		writeString(b, n.Value)
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		j, err := json.Marshal(v)
		if err != nil { // NaN and infinities have no JSON form
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.Write(j)
	default:
		return fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.ShortTag())
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // strings always encode
	b.Truncate(b.Len() - 1) // Encode's newline
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// MaxBodyBytes is the largest request body accepted.
const MaxBodyBytes = 1 << 20

// decodeBody reads a JSON object into dst, strictly: unknown fields are validation_failed, a body
// that is not a JSON object or has a field of the wrong type is bad_request, a body over 1 MiB is
// payload_too_large. An empty body is read as {} when emptyOK.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return kiln.Errorf(kiln.EBadRequest, "the request body must be a JSON object")
	}
	return decodeObject(body, dst)
}

// readBody reads a request body of at most MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return readBodyUpTo(w, r, MaxBodyBytes)
}

// readBodyUpTo reads a request body of at most limit bytes.
func readBodyUpTo(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, kiln.Errorf(kiln.EPayloadTooLarge, "the request body is larger than %d MiB", limit>>20)
		}
		return nil, kiln.Errorf(kiln.EBadRequest, "could not read the request body")
	}
	return body, nil
}

// decodeObject decodes a body that must be one JSON object.
func decodeObject(body []byte, dst any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return kiln.Errorf(kiln.EBadRequest, "the request body must be a JSON object")
	}
	return decodeStrict(trimmed, dst)
}

// decodeStrict decodes one JSON value with unknown fields refused and nothing after it.
func decodeStrict(data []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return kiln.Errorf(kiln.EBadRequest, "the request body must hold exactly one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return kiln.Errorf(kiln.EBadRequest, "the request body must hold exactly one JSON object")
	}
	return nil
}

// jsonError turns encoding/json's errors into API errors.
func jsonError(err error) error {
	var ke *kiln.Error
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &ke):
		return ke
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return kiln.FieldError(kiln.EBadRequest, fmt.Sprintf("field %s has the wrong JSON type", field),
			field, "must be "+jsonTypeName(typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return kiln.Errorf(kiln.EBadRequest, "the request body is not valid JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return kiln.FieldError(kiln.EValidation, fmt.Sprintf("unknown field %q", name), name, "unknown field")
	default:
		return kiln.Errorf(kiln.EBadRequest, "the request body could not be read as JSON")
	}
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	default:
		return "an object"
	}
}

// Optional is a request field that may be absent, null, or set. PATCH bodies use it to tell "leave
// unchanged" (absent) from "clear" (null).
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records that the field was present, and decodes it as strictly as the body.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	// The error goes back unconverted, so that encoding/json names the field it belongs to.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(&o.Value)
}

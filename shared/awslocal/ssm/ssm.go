// Package ssm stands in for AWS Systems Manager Parameter Store on this machine (kiln
// aws-local): it answers PutParameter, GetParameters and DeleteParameter in SSM's JSON 1.1
// protocol (POST / with X-Amz-Target: AmazonSSM.<operation>), so the real AWS SDK client talks
// to it through an endpoint override, and keeps the standard tier's limits (a value of at most
// 4 KB, 10,000 parameters).
//
// Parameters live in memory only: nothing is written to disk, and a restart loses them (the
// builds whose hosts they were for are failed as interrupted on restart anyway). A SecureString
// value is kept encrypted (AES-256-GCM under a key made at start, standing in for the KMS key)
// and answered decrypted only to WithDecryption, as Parameter Store answers the ciphertext
// otherwise.
package ssm

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Standard-tier limits (Parameter Store's "Managing parameter tiers").
const (
	MaxValueBytes = 4096
	MaxParameters = 10000
	// maxNames is the most names one GetParameters takes.
	maxNames = 10
)

// Server is the stand-in.
type Server struct {
	// Region and Account make the parameters' ARNs.
	Region, Account string

	once   sync.Once
	aead   cipher.AEAD
	keyErr error
	mu     sync.Mutex
	params map[string]*parameter
}

// parameter is one stored parameter; a SecureString's value is its ciphertext (nonce first).
type parameter struct {
	typ      string
	value    []byte
	version  int64
	modified time.Time
}

func (s *Server) init() error {
	s.once.Do(func() {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			s.keyErr = err
			return
		}
		block, err := aes.NewCipher(key)
		if err == nil {
			s.aead, err = cipher.NewGCM(block)
		}
		s.keyErr = err
		s.params = map[string]*parameter{}
	})
	return s.keyErr
}

// apiError is an error answered as SSM answers it.
type apiError struct {
	status  int
	Type    string `json:"__type"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return e.Type + ": " + e.Message }

func invalid(typ, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// ServeHTTP answers the JSON 1.1 protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AmazonSSM.")
	if r.Method != http.MethodPost || !ok {
		writeJSON(w, http.StatusBadRequest, invalid("UnknownOperationException", "not an SSM operation"))
		return
	}
	if err := s.init(); err != nil {
		writeJSON(w, http.StatusInternalServerError, &apiError{Type: "InternalServerError", Message: err.Error()})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, invalid("SerializationException", "unreadable request"))
		return
	}
	var out any
	switch op {
	case "PutParameter":
		var in putInput
		if err = decode(body, &in); err == nil {
			out, err = s.put(in)
		}
	case "GetParameters":
		var in struct {
			Names          []string
			WithDecryption bool
		}
		if err = decode(body, &in); err == nil {
			out, err = s.get(in.Names, in.WithDecryption)
		}
	case "DeleteParameter":
		var in struct{ Name string }
		if err = decode(body, &in); err == nil {
			out, err = s.delete(in.Name)
		}
	default:
		err = invalid("UnknownOperationException", "kiln's SSM stand-in answers PutParameter, GetParameters and DeleteParameter, not %s", op)
	}
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeJSON(w, ae.status, ae)
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, &apiError{Type: "InternalServerError", Message: err.Error()})
	default:
		writeJSON(w, http.StatusOK, out)
	}
}

type putInput struct {
	Name, Value, Type, KeyId, Tier, Description string
	Overwrite                                   bool
}

// nameRe is what a parameter name may hold; a hierarchical one starts with a slash.
var nameRe = regexp.MustCompile(`^/?[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*$`)

// checkName checks a name as Parameter Store does: its characters, a leading slash for a
// hierarchy, at most 15 levels, at most 1011 characters, no aws or ssm prefix.
func checkName(name string) error {
	switch {
	case name == "" || len(name) > 1011 || !nameRe.MatchString(name):
		return invalid("ValidationException", "parameter name %q: 1 to 1011 characters of a-zA-Z0-9_.-, levels separated by /", name)
	case strings.Contains(name, "/") && !strings.HasPrefix(name, "/"):
		return invalid("ValidationException", "parameter name %q: a name in a hierarchy must start with /", name)
	case strings.Count(name, "/") > 15:
		return invalid("HierarchyLevelLimitExceededException", "parameter name %q: more than 15 levels", name)
	}
	first := strings.ToLower(strings.TrimPrefix(name, "/"))
	if strings.HasPrefix(first, "aws") || strings.HasPrefix(first, "ssm") {
		return invalid("ValidationException", "parameter name %q: a name cannot start with aws or ssm", name)
	}
	return nil
}

func (s *Server) put(in putInput) (any, error) {
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	switch {
	case in.Value == "":
		return nil, invalid("ValidationException", "a parameter needs a value")
	case len(in.Value) > MaxValueBytes:
		return nil, invalid("ValidationException", "Standard tier parameters support a maximum parameter value of %d characters", MaxValueBytes)
	case in.Tier != "" && in.Tier != "Standard":
		return nil, invalid("ValidationException", "kiln's SSM stand-in keeps the Standard tier only, not %s", in.Tier)
	case in.KeyId != "" && in.KeyId != "alias/aws/ssm":
		return nil, invalid("ValidationException", "kiln's SSM stand-in encrypts with the AWS managed key alias/aws/ssm only, not %s", in.KeyId)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.params[in.Name]
	typ := in.Type
	switch {
	case old != nil && !in.Overwrite:
		return nil, invalid("ParameterAlreadyExists", "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.")
	case typ == "" && old != nil:
		typ = old.typ
	case typ != "String" && typ != "StringList" && typ != "SecureString":
		return nil, invalid("ValidationException", "Type must be String, StringList or SecureString, not %q", in.Type)
	case old == nil && len(s.params) >= MaxParameters:
		return nil, invalid("ParameterLimitExceeded", "You have reached the maximum number of parameters (%d) of the standard tier", MaxParameters)
	}
	value := []byte(in.Value)
	if typ == "SecureString" {
		nonce := make([]byte, s.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		value = s.aead.Seal(nonce, nonce, value, []byte(in.Name))
	}
	p := &parameter{typ: typ, value: value, version: 1, modified: time.Now()}
	if old != nil {
		p.version = old.version + 1
	}
	s.params[in.Name] = p
	return map[string]any{"Version": p.version, "Tier": "Standard"}, nil
}

// Parameter is a parameter as GetParameters answers it.
type Parameter struct {
	Name             string
	Type             string
	Value            string
	Version          int64
	ARN              string
	DataType         string
	LastModifiedDate float64
}

func (s *Server) get(names []string, decrypt bool) (any, error) {
	if len(names) == 0 || len(names) > maxNames {
		return nil, invalid("ValidationException", "GetParameters takes 1 to %d names", maxNames)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	found, invalidNames := []Parameter{}, []string{}
	for _, name := range names {
		p := s.params[name]
		if p == nil {
			invalidNames = append(invalidNames, name)
			continue
		}
		value := string(p.value)
		if p.typ == "SecureString" {
			if decrypt {
				n := s.aead.NonceSize()
				plain, err := s.aead.Open(nil, p.value[:n], p.value[n:], []byte(name))
				if err != nil {
					return nil, fmt.Errorf("decrypt %s: %w", name, err)
				}
				value = string(plain)
			} else {
				value = base64.StdEncoding.EncodeToString(p.value)
			}
		}
		found = append(found, Parameter{Name: name, Type: p.typ, Value: value, Version: p.version, ARN: s.ARN(name),
			DataType: "text", LastModifiedDate: float64(p.modified.UnixMilli()) / 1000})
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	return map[string]any{"Parameters": found, "InvalidParameters": invalidNames}, nil
}

func (s *Server) delete(name string) (any, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.params[name] == nil {
		return nil, invalid("ParameterNotFound", "Parameter %s not found.", name)
	}
	delete(s.params, name)
	return map[string]any{}, nil
}

// ARN is a parameter's ARN (a hierarchical name's leading slash is not doubled).
func (s *Server) ARN(name string) string {
	return ParameterARN(s.Region, s.Account, name)
}

// ParameterARN is the ARN of parameter name in the region and account.
func ParameterARN(region, account, name string) string {
	return "arn:aws:ssm:" + region + ":" + account + ":parameter/" + strings.TrimPrefix(name, "/")
}

// Names are the names of the parameters stored now, sorted (tests).
func (s *Server) Names() []string {
	if s.init() != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.params))
	for n := range s.params {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return invalid("SerializationException", "the request is not valid JSON: %v", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if ae, ok := v.(*apiError); ok {
		w.Header().Set("X-Amzn-ErrorType", ae.Type)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

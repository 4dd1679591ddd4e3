package lambdas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

type greeting struct {
	Name string `json:"name"`
}

type kilnError struct{ msg string }

func (e *kilnError) Error() string { return e.msg }

// client is the AWS SDK's Lambda client pointed at a stand-in serving fns.
func client(t *testing.T, fns map[string]any) (*awslambda.Client, *Server) {
	t.Helper()
	s := New(fns, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Cleanup(s.Wait)
	return awslambda.New(awslambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}), s
}

// TestInvokeAnswersAsLambda: the SDK's Invoke gets the function's result, a function's error as
// Lambda reports it (200, FunctionError Unhandled, aws-lambda-go's errorMessage and errorType),
// ResourceNotFoundException for an unknown function, 202 for an Event invocation (which runs),
// 204 for a DryRun, and Lambda's limits on request and response payloads.
func TestInvokeAnswersAsLambda(t *testing.T) {
	ran := make(chan string, 1)
	c, _ := client(t, map[string]any{
		"hello": func(_ context.Context, g greeting) (map[string]string, error) {
			return map[string]string{"hi": g.Name}, nil
		},
		"plain": func(context.Context) error { return errors.New("plain failure") },
		"typed": func(context.Context) error { return &kilnError{"no such organization"} },
		"panic": func(context.Context) error { panic("boom") },
		"event": func(_ context.Context, g greeting) error { ran <- g.Name; return nil },
		"huge":  func(context.Context) (string, error) { return strings.Repeat("x", MaxResponsePayload), nil },
	})
	tests := []struct {
		name, function, invocation string
		payload                    []byte
		status                     int32
		functionError, body        string
	}{
		{"a result", "hello", "", []byte(`{"name":"Ada"}`), 200, "", `{"hi":"Ada"}`},
		{"by ARN", "arn:aws:lambda:us-east-1:000000000000:function:hello", "", []byte(`{"name":"Bo"}`), 200, "", `{"hi":"Bo"}`},
		{"an error", "plain", "", nil, 200, "Unhandled", `{"errorMessage":"plain failure","errorType":"errorString"}`},
		{"a typed error", "typed", "", nil, 200, "Unhandled", `{"errorMessage":"no such organization","errorType":"kilnError"}`},
		{"a panic", "panic", "", nil, 200, "Unhandled", `{"errorMessage":"boom","errorType":"string"}`},
		{"a response over 6 MB", "huge", "", nil, 200, "Unhandled",
			`{"errorMessage":"Response payload size exceeded maximum allowed payload size (6291556 bytes).","errorType":"Function.ResponseSizeTooLarge"}`},
		{"an event", "event", "Event", []byte(`{"name":"Cy"}`), 202, "", ""},
		{"a dry run", "hello", "DryRun", nil, 204, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &awslambda.InvokeInput{FunctionName: aws.String(tt.function), Payload: tt.payload}
			if tt.invocation != "" {
				in.InvocationType = types.InvocationType(tt.invocation)
			}
			out, err := c.Invoke(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if out.StatusCode != tt.status || aws.ToString(out.FunctionError) != tt.functionError || strings.TrimSpace(string(out.Payload)) != tt.body {
				t.Fatalf("got %d %q %.200s; want %d %q %s", out.StatusCode, aws.ToString(out.FunctionError), out.Payload, tt.status, tt.functionError, tt.body)
			}
		})
	}
	select {
	case name := <-ran:
		if name != "Cy" {
			t.Fatalf("the event function got %q", name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the Event invocation never ran")
	}

	var notFound *types.ResourceNotFoundException
	if _, err := c.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("nope")}); !errors.As(err, &notFound) {
		t.Fatalf("unknown function: %v, want ResourceNotFoundException", err)
	}
	var tooLarge *types.RequestTooLargeException
	big, _ := json.Marshal(greeting{Name: string(bytes.Repeat([]byte("a"), MaxRequestPayload))})
	if _, err := c.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("hello"), Payload: big}); !errors.As(err, &tooLarge) {
		t.Fatalf("a request over 6 MB: %v, want RequestTooLargeException", err)
	}
}

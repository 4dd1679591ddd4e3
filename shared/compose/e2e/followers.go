package e2e

import (
	"net/http"
	"testing"
)

// follow opens GET /builds/:id/logs?follow=1; a 200 stays open until the test ends.
func (w *World) Follow(t *testing.T, id, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", w.URL()+"/builds/"+id+"/logs?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

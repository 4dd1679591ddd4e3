package awscost

import (
	"net/http"
	"net/url"
)

// S3Request is the use of one S3 REST request (path style: a key or only a bucket) on S3
// Standard: PUT, COPY, POST and LIST requests (ListObjects, ListMultipartUploads, ListParts,
// every multipart step) are tier 1; GET, HEAD and every other request tier 2; DELETE requests
// (an object's, DeleteObjects', a multipart upload's abort) are free.
func S3Request(method string, query url.Values, hasKey bool) Usage {
	has := func(k string) bool { _, ok := query[k]; return ok }
	switch method {
	case http.MethodDelete:
		return Usage{S3FreeRequests: 1}
	case http.MethodPut:
		return Usage{S3Tier1Requests: 1}
	case http.MethodPost:
		if !hasKey && has("delete") { // DeleteObjects
			return Usage{S3FreeRequests: 1}
		}
		return Usage{S3Tier1Requests: 1}
	case http.MethodGet:
		switch {
		case !hasKey && !has("location"): // ListObjects(V2), ListMultipartUploads
			return Usage{S3Tier1Requests: 1}
		case hasKey && has("uploadId"): // ListParts
			return Usage{S3Tier1Requests: 1}
		}
	}
	return Usage{S3Tier2Requests: 1}
}

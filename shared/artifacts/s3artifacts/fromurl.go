package s3artifacts

import "github.com/aws/aws-sdk-go-v2/service/s3"

// FromURL is the store at an s3://bucket[/prefix] URL, with parts large enough for an artifact
// of maxSize bytes (0: the default part size).
func FromURL(client *s3.Client, url string, maxSize int64) (*Store, error) {
	loc, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return New(client, loc, Options{PartSize: PartSizeFor(maxSize)}), nil
}

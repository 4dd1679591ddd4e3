package kiln

import (
	"errors"
	"testing"
)

func TestFieldError(t *testing.T) {
	err := error(FieldError(EValidation, "month must be YYYY-MM", "month", "must be YYYY-MM"))
	var ke *Error
	if !errors.As(err, &ke) || ke.Code != EValidation || ke.Message != "month must be YYYY-MM" ||
		len(ke.Fields) != 1 || ke.Fields["month"] != "must be YYYY-MM" {
		t.Fatalf("FieldError = %#v", err)
	}
}

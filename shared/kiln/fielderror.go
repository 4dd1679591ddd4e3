package kiln

// FieldError is an error of code about one field: message for people, problem for the field.
func FieldError(code, message, field, problem string) *Error {
	return &Error{Code: code, Message: message, Fields: map[string]string{field: problem}}
}

package verify

import (
	"encoding/json"
	"fmt"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// validJSON is encoding/json.Valid run on the json/v2 engine
// (go-json-experiment/json/v1 keeps v1's semantics; it is what encoding/json
// becomes under GOEXPERIMENT=jsonv2), which is faster, and every GitHub
// delivery is checked on the ack path (bench/README.md, Design decisions,
// "Payloads and JSON"). FuzzValidJSONMatchesEncodingJSON holds the two to one
// answer.
func validJSON(body []byte) bool { return jsonv1.Valid(body) }

// decodeObject unmarshals a body that must be a JSON object into dst, whose
// fields should be json.RawMessage so each can get its own error. Decoder
// errors are not echoed: they quote bytes of a body we may be refusing.
func decodeObject(body []byte, dst any) error {
	trimmed := trimJSONSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%w: body is not a JSON object", ErrInvalidPayload)
	}
	if err := json.Unmarshal(trimmed, dst); err != nil {
		return fmt.Errorf("%w: body is not valid JSON", ErrInvalidPayload)
	}
	return nil
}

// stringField returns a required string field of a decoded body, checked
// with checkID.
func stringField(raw json.RawMessage, name string) (string, error) {
	field := "body field " + name
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("%w: %s is missing", ErrInvalidPayload, field)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %s must be a string", ErrInvalidPayload, field)
	}
	if err := checkID(field, s); err != nil {
		return "", err
	}
	return s, nil
}

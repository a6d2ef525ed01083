package linearizability

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
)

// FuzzParsePut: the recorder's decoder of Contents API write bodies never
// panics, and what it decodes re-encodes to a body that decodes the same.
func FuzzParsePut(f *testing.F) {
	f.Add([]byte(`{"message":"Acquire seats","content":"e30K","sha":"abc","branch":"lock-state"}`))
	f.Add([]byte(`{"message":"m","content":"e30\nK"}`))
	f.Add([]byte(`{"content":"!!"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"message":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, content, sha, branch, err := ParsePut(body)
		if err != nil {
			return
		}
		again, err := json.Marshal(putBody{Message: msg, Content: base64.StdEncoding.EncodeToString(content), SHA: sha, Branch: branch})
		if err != nil {
			t.Fatal(err)
		}
		msg2, content2, sha2, branch2, err := ParsePut(again)
		if err != nil {
			t.Fatalf("re-encoded body does not parse: %v", err)
		}
		if msg2 != msg || !bytes.Equal(content2, content) || sha2 != sha || branch2 != branch {
			t.Fatalf("round trip changed the write: %q %q %q %q", msg2, content2, sha2, branch2)
		}
	})
}

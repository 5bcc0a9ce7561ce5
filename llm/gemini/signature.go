package gemini

import (
	"encoding/json"

	"github.com/engine-brain/brain/conversation"
)

// signatureFormat is the Format of the provider payload that carries a
// part's thought signature: Gemini's opaque token of the reasoning behind
// a part, which it wants back on that part when the conversation is
// replayed. The Value is the signature as a JSON string, in base64 (as on
// the wire).
const signatureFormat = "thought_signature"

// signaturePayload carries sig in a provider payload; nil for none.
func signaturePayload(sig []byte) *conversation.ProviderPayload {
	if len(sig) == 0 {
		return nil
	}
	v, _ := json.Marshal(sig) // a []byte marshals to a base64 string
	return &conversation.ProviderPayload{Provider: name, Format: signatureFormat, Value: v}
}

// signatureOf returns the signature p carries; nil when p is another
// provider's payload, another format or not readable.
func signatureOf(p *conversation.ProviderPayload) []byte {
	if p == nil || p.Provider != name || p.Format != signatureFormat {
		return nil
	}
	var sig []byte
	if json.Unmarshal(p.Value, &sig) != nil {
		return nil
	}
	return sig
}

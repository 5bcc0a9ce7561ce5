package conversation

import (
	"encoding/json"
	"slices"
	"strings"
)

// Role is an audience a content block is addressed to, as in MCP's
// annotations.audience.
type Role string

// Audiences.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

// Block types understood by brain. Blocks of other types (from a newer MCP
// server, say) decode without error and are carried unchanged.
const (
	BlockText     BlockType = "text"
	BlockImage    BlockType = "image"
	BlockResource BlockType = "resource"
)

// MimeMarkdown marks a text block whose text is markdown (GFM).
const MimeMarkdown = "text/markdown"

// Block is one piece of tool result content, MCP-compatible: its JSON uses
// MCP's field names. MimeType on a text block is brain's extension (MCP's
// TextContent has none); absence means plain text.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the content of a text block.
	Text string `json:"text,omitempty"`
	// MimeType is the media type of a text block (optional, e.g.
	// text/markdown) or of an image block's data.
	MimeType string `json:"mimeType,omitempty"`
	// Data is an image block's base64-encoded bytes.
	Data string `json:"data,omitempty"`
	// Resource is a resource block's embedded resource.
	Resource    *Resource    `json:"resource,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// Resource is the embedded resource of a resource block: text or base64
// blob contents identified by a URI.
type Resource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// Annotations are MCP's block annotations. Only Audience has behaviour in
// brain; Priority and LastModified are carried unchanged so that MCP results
// round-trip.
type Annotations struct {
	// Audience lists who the block is addressed to. Empty means everyone.
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// MarshalJSON encodes b with MCP's field names. A text block always carries
// its text field, even when empty, as MCP's TextContent requires it.
func (b Block) MarshalJSON() ([]byte, error) {
	if b.Type == BlockText {
		return json.Marshal(textWire(b))
	}
	type plain Block // no methods: no recursion
	return json.Marshal(plain(b))
}

// textWire is Block with text always present. The conversion from Block
// stops compiling when the two drift apart.
type textWire struct {
	Type        BlockType    `json:"type"`
	Text        string       `json:"text"`
	MimeType    string       `json:"mimeType,omitempty"`
	Data        string       `json:"data,omitempty"`
	Resource    *Resource    `json:"resource,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// TextBlock returns a plain text block addressed to everyone.
func TextBlock(text string) Block {
	return Block{Type: BlockText, Text: text}
}

// MarkdownBlock returns a text block whose text is markdown.
func MarkdownBlock(text string) Block {
	return Block{Type: BlockText, Text: text, MimeType: MimeMarkdown}
}

// ImageBlock returns an image block from base64-encoded data.
func ImageBlock(mimeType, base64Data string) Block {
	return Block{Type: BlockImage, MimeType: mimeType, Data: base64Data}
}

// ResourceBlock returns a block embedding r.
func ResourceBlock(r Resource) Block {
	return Block{Type: BlockResource, Resource: &r}
}

// For returns a copy of b addressed to roles only. With no roles the copy
// has no audience, so it is addressed to everyone. Other annotations are
// kept; b itself is not modified.
func (b Block) For(roles ...Role) Block {
	var a Annotations
	if b.Annotations != nil {
		a = *b.Annotations
	}
	a.Audience = slices.Clone(roles)
	if len(a.Audience) == 0 && a.Priority == nil && a.LastModified == "" {
		b.Annotations = nil
		return b
	}
	b.Annotations = &a
	return b
}

// AddressedTo reports whether b is addressed to r: its audience is absent or
// empty, or contains r.
func (b Block) AddressedTo(r Role) bool {
	if b.Annotations == nil || len(b.Annotations.Audience) == 0 {
		return true
	}
	return slices.Contains(b.Annotations.Audience, r)
}

// ForAssistant reports whether b belongs in the provider view.
func (b Block) ForAssistant() bool { return b.AddressedTo(RoleAssistant) }

// ForUser reports whether b belongs in the user view.
func (b Block) ForUser() bool { return b.AddressedTo(RoleUser) }

// AddressedTo returns the blocks addressed to r, in order. When every block
// is, it returns blocks itself (clipped, so appending never writes into the
// caller's array); otherwise a new slice. Treat the result as read-only.
func AddressedTo(blocks []Block, r Role) []Block {
	i := slices.IndexFunc(blocks, func(b Block) bool { return !b.AddressedTo(r) })
	if i < 0 {
		return slices.Clip(blocks)
	}
	out := make([]Block, i, len(blocks)-1)
	copy(out, blocks[:i])
	for _, b := range blocks[i+1:] {
		if b.AddressedTo(r) {
			out = append(out, b)
		}
	}
	return out
}

// TextOf returns the text of blocks joined by newlines: the text of text
// blocks and of text resources; images and blobs contribute nothing. It
// ignores audience: filter with [AddressedTo] first to measure what one
// audience sees (the data-relay validator measures the assistant's side).
func TextOf(blocks []Block) string {
	var sb strings.Builder
	n := 0
	for _, b := range blocks {
		t := b.text()
		if t == "" {
			continue
		}
		if n > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(t)
		n++
	}
	return sb.String()
}

// text returns the textual content of b, if any.
func (b Block) text() string {
	switch b.Type {
	case BlockText:
		return b.Text
	case BlockResource:
		if b.Resource != nil {
			return b.Resource.Text
		}
	}
	return ""
}

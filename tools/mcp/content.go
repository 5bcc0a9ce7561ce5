package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// result converts a server's result. The blocks keep their audience; a
// failed result's blocks without one are addressed to the model, as
// tools.ErrorResult's are. A result with no content but structured content
// shows the latter as JSON text.
func result(res *sdk.CallToolResult) tools.Result {
	out := tools.Result{IsError: res.IsError, Content: make([]conversation.Block, 0, len(res.Content))}
	for _, c := range res.Content {
		b := block(c)
		if res.IsError && !hasAudience(b) {
			b = b.For(conversation.RoleAssistant)
		}
		out.Content = append(out.Content, b)
	}
	if len(out.Content) == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			out.Content = append(out.Content, conversation.TextBlock(string(j)))
		}
	}
	return out
}

func hasAudience(b conversation.Block) bool {
	return b.Annotations != nil && len(b.Annotations.Audience) > 0
}

// block converts one content item. Kinds brain has no block for (audio, a
// resource link) become text saying what they were.
func block(c sdk.Content) conversation.Block {
	switch c := c.(type) {
	case *sdk.TextContent:
		return annotate(conversation.TextBlock(c.Text), c.Annotations)
	case *sdk.ImageContent:
		return annotate(conversation.ImageBlock(c.MIMEType, base64.StdEncoding.EncodeToString(c.Data)), c.Annotations)
	case *sdk.EmbeddedResource:
		var r conversation.Resource
		if c.Resource != nil {
			r = conversation.Resource{URI: c.Resource.URI, MimeType: c.Resource.MIMEType, Text: c.Resource.Text}
			if c.Resource.Blob != nil {
				r.Blob = base64.StdEncoding.EncodeToString(c.Resource.Blob)
			}
		}
		return annotate(conversation.ResourceBlock(r), c.Annotations)
	case *sdk.ResourceLink:
		name := c.Title
		if name == "" {
			name = c.Name
		}
		return annotate(conversation.TextBlock(fmt.Sprintf("Resource %s: %s", name, c.URI)), c.Annotations)
	case *sdk.AudioContent:
		return annotate(conversation.TextBlock(fmt.Sprintf("[%s audio, %d bytes, not shown]", c.MIMEType, len(c.Data))), c.Annotations)
	}
	return conversation.TextBlock(fmt.Sprintf("[content of type %T, not shown]", c))
}

// annotate gives b the annotations a.
func annotate(b conversation.Block, a *sdk.Annotations) conversation.Block {
	if a == nil {
		return b
	}
	roles := make([]conversation.Role, len(a.Audience))
	for i, r := range a.Audience {
		roles[i] = conversation.Role(r)
	}
	var ann conversation.Annotations
	if len(roles) > 0 {
		ann.Audience = roles
	}
	if a.Priority != 0 {
		p := a.Priority
		ann.Priority = &p
	}
	ann.LastModified = a.LastModified
	if ann.Audience == nil && ann.Priority == nil && ann.LastModified == "" {
		return b
	}
	b.Annotations = &ann
	return b
}

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/engine-brain/brain/internal/ctxtime"
	"github.com/engine-brain/brain/recipes"
)

// Client is a Go client of the API. Errors the server answers are *Error,
// with the server's status, code and message.
type Client struct {
	// BaseURL is the server's address, such as http://127.0.0.1:8080.
	BaseURL string
	// Token is the bearer token; empty sends none (an open server).
	Token string
	// HTTP makes the requests (http.DefaultClient when nil). It must have
	// no Timeout for Stream: bound calls with their context instead.
	HTTP *http.Client
}

// NewClient returns a client of the server at baseURL.
func NewClient(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{}}
}

// CreateProcess creates a process; with req.IdempotencyKey it tries again
// as Send does, and makes the process once.
func (c *Client) CreateProcess(ctx context.Context, req CreateRequest) (Process, error) {
	var p Process
	err := c.retrying(ctx, req.IdempotencyKey, func(h http.Header) error {
		return c.do(ctx, http.MethodPost, "/v1/processes", nil, h, req, &p)
	})
	return p, err
}

// ProcessFilter narrows a list of processes; its zero value lists every
// process the caller may see.
type ProcessFilter struct {
	State  string // only processes in this state
	Recipe string // only instances of this recipe
	Parent string // only the workers this process started
}

// ListProcesses lists the processes f keeps, after the cursor after; limit
// 0 takes the server's default. A filtered page may come back short with a
// next cursor: follow it for the rest.
func (c *Client) ListProcesses(ctx context.Context, f ProcessFilter, after string, limit int) (ProcessPage, error) {
	q := url.Values{}
	set(q, "parent", f.Parent)
	set(q, "state", f.State)
	set(q, "recipe", f.Recipe)
	set(q, "after", after)
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var page ProcessPage
	err := c.do(ctx, http.MethodGet, "/v1/processes", q, nil, nil, &page)
	return page, err
}

// GetProcess returns a process.
func (c *Client) GetProcess(ctx context.Context, id string) (Process, error) {
	var p Process
	err := c.do(ctx, http.MethodGet, processPath(id, ""), nil, nil, nil, &p)
	return p, err
}

// Send posts a user message and returns its inbox id. A non-empty
// idempotencyKey makes a repeated Send return the first message's id, and
// lets Send itself try again, up to sendAttempts times, when the server
// cannot store the message just now (503, a gateway's 502 or 504) or does
// not answer: the message is stored once however often it is sent. A
// process that runs a turn and whose recipe refuses messages meanwhile
// refuses it with an *Error that matches ErrBusy: send it again once the
// turn has ended.
func (c *Client) Send(ctx context.Context, id, content, idempotencyKey string) (string, error) {
	return c.postMessage(ctx, processPath(id, "/messages"), content, idempotencyKey)
}

// Steer posts an operator message and returns its inbox id;
// idempotencyKey works as Send's.
func (c *Client) Steer(ctx context.Context, id, content, idempotencyKey string) (string, error) {
	return c.postMessage(ctx, processPath(id, "/steer"), content, idempotencyKey)
}

// Decide posts a decision on tool call callID of process id, which waits
// for approval, and returns its inbox id; idempotencyKey works as Send's.
// A call that waits for no decision is a 409 not_pending.
func (c *Client) Decide(ctx context.Context, id, callID string, d ApprovalRequest, idempotencyKey string) (string, error) {
	var acc MessageAccepted
	err := c.retrying(ctx, idempotencyKey, func(h http.Header) error {
		return c.do(ctx, http.MethodPost, processPath(id, "/approvals/"+url.PathEscape(callID)), nil, h, d, &acc)
	})
	return acc.MessageID, err
}

// Approvals returns the tool calls waiting for a decision that the caller
// may take, oldest first (a user: those of her own processes that she may
// decide).
func (c *Client) Approvals(ctx context.Context) ([]PendingApproval, error) {
	var list ApprovalList
	err := c.do(ctx, http.MethodGet, "/v1/approvals", nil, nil, nil, &list)
	return list.Approvals, err
}

// postMessage posts a message to path: see Send.
func (c *Client) postMessage(ctx context.Context, path, content, idempotencyKey string) (string, error) {
	var acc MessageAccepted
	err := c.retrying(ctx, idempotencyKey, func(h http.Header) error {
		return c.do(ctx, http.MethodPost, path, nil, h, MessageRequest{Content: content}, &acc)
	})
	return acc.MessageID, err
}

// retrying makes a request (call, given its headers) that idempotencyKey,
// when set, makes safe to repeat, and repeats it, up to sendAttempts
// times, while it fails transiently.
func (c *Client) retrying(ctx context.Context, idempotencyKey string, call func(http.Header) error) error {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	wait := sendRetryWait
	for attempt := 1; ; attempt++ {
		err := call(h)
		if err == nil || idempotencyKey == "" || attempt == sendAttempts || !transient(err) {
			return err
		}
		if ctxtime.Sleep(ctx, wait) != nil {
			return err
		}
		wait *= 2
	}
}

// sendAttempts bounds how often Send tries a message; the waits between
// tries double from sendRetryWait (3.1 s in all).
const (
	sendAttempts  = 6
	sendRetryWait = 100 * time.Millisecond
)

// transient reports whether a request failed in a way that may pass if
// made again: the server or a gateway in front of it cannot serve just
// now, or no answer came (the connection was refused, reset or closed, or
// timed out). A request that cannot succeed as made (a malformed server
// URL, a certificate the client does not trust) or that the caller
// cancelled is not.
func transient(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status == http.StatusServiceUnavailable || e.Status == http.StatusBadGateway || e.Status == http.StatusGatewayTimeout
	}
	var urlErr *url.Error
	if !errors.As(err, &urlErr) || errors.Is(err, context.Canceled) {
		return false
	}
	var netErr net.Error // *url.Error is one too: look at what it wraps
	return urlErr.Timeout() || errors.As(urlErr.Err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Control pauses, resumes, stops or retries a process (action pause,
// resume, stop or retry) and returns it afterwards.
func (c *Client) Control(ctx context.Context, id, action string) (Process, error) {
	switch action {
	case "pause", "resume", "stop", "retry":
	default:
		return Process{}, fmt.Errorf("api: unknown action %q; want pause, resume, stop or retry", action)
	}
	var p Process
	err := c.do(ctx, http.MethodPost, processPath(id, "/"+action), nil, nil, nil, &p)
	return p, err
}

// DeleteProcess removes a process and everything it has, its workers
// included, and returns it as it was with the ids of the workers deleted.
func (c *Client) DeleteProcess(ctx context.Context, id string) (DeletedProcess, error) {
	var p DeletedProcess
	err := c.do(ctx, http.MethodDelete, processPath(id, ""), nil, nil, nil, &p)
	return p, err
}

// Inbox returns the messages waiting in a process's inbox, oldest first
// (operators).
func (c *Client) Inbox(ctx context.Context, id string) ([]InboxMessage, error) {
	var list InboxList
	err := c.do(ctx, http.MethodGet, processPath(id, "/inbox"), nil, nil, nil, &list)
	return list.Messages, err
}

// Timers returns the timers of a process, by due time.
func (c *Client) Timers(ctx context.Context, id string) ([]Timer, error) {
	var list TimerList
	err := c.do(ctx, http.MethodGet, processPath(id, "/timers"), nil, nil, nil, &list)
	return list.Timers, err
}

// ScheduleTimer arms a timer on a process and returns it: its Message is
// posted to the process's inbox when due.
func (c *Client) ScheduleTimer(ctx context.Context, id string, req TimerRequest) (Timer, error) {
	var t Timer
	err := c.do(ctx, http.MethodPost, processPath(id, "/timers"), nil, nil, req, &t)
	return t, err
}

// CancelTimer cancels a timer of a process.
func (c *Client) CancelTimer(ctx context.Context, id, timer string) error {
	return c.do(ctx, http.MethodDelete, processPath(id, "/timers/"+url.PathEscape(timer)), nil, nil, nil, nil)
}

// Events returns a page of a process's log in view ("user", "raw" or ""
// for the server's default) after the event id after; limit 0 takes the
// server's default.
func (c *Client) Events(ctx context.Context, id, view, after string, limit int) (EventPage, error) {
	q := url.Values{}
	set(q, "view", view)
	set(q, "after", after)
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var page EventPage
	err := c.do(ctx, http.MethodGet, processPath(id, "/events"), q, nil, nil, &page)
	return page, err
}

// ListRecipes lists the server's recipes.
func (c *Client) ListRecipes(ctx context.Context) (RecipeList, error) {
	var list RecipeList
	err := c.do(ctx, http.MethodGet, "/v1/recipes", nil, nil, nil, &list)
	return list, err
}

// GetRecipe returns a recipe as the server resolved it.
func (c *Client) GetRecipe(ctx context.Context, name string) (*recipes.Recipe, error) {
	var r recipes.Recipe
	if err := c.do(ctx, http.MethodGet, "/v1/recipes/"+url.PathEscape(name), nil, nil, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReloadRecipes makes the server reload its recipes (admin) and returns the
// new list.
func (c *Client) ReloadRecipes(ctx context.Context) (RecipeList, error) {
	var list RecipeList
	err := c.do(ctx, http.MethodPost, "/v1/recipes/reload", nil, nil, nil, &list)
	return list, err
}

func processPath(id, suffix string) string {
	return "/v1/processes/" + url.PathEscape(id) + suffix
}

func set(q url.Values, key, value string) {
	if value != "" {
		q.Set(key, value)
	}
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// newRequest builds a request to path with query, headers and body (JSON
// when not nil).
func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, h http.Header, body any) (*http.Request, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("api: %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// do makes a request and decodes a 2xx answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, h http.Header, body, out any) error {
	req, err := c.newRequest(ctx, method, path, q, h, body)
	if err != nil {
		return err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("api: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return responseError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("api: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// responseError reads an error answer: the server's *Error, or one made of
// the status and the start of the body when the answer is not an API error
// (a proxy's page).
func responseError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode}
	if err := json.Unmarshal(body, e); err == nil {
		return e
	}
	e.Code = "http_" + strconv.Itoa(resp.StatusCode)
	e.Message = strings.TrimSpace(string(body))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

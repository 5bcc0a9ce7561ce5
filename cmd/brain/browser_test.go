package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// browserTimeout bounds the whole browser test, Chromium's start included:
// a guard against a page that never gets there, not a measure. A test of
// about 10 s alone took over 60 s under the whole suite's load on 2 cores.
const browserTimeout = 3 * time.Minute

// chromiumPath finds Debian's Chromium: "" when there is none.
func chromiumPath() string {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// The tokens of the browser tests' server: two users and an operator.
const (
	browserTokA  = "browser-alice-token"
	browserTokB  = "browser-bob-token"
	browserTokOp = "browser-ops-token"
)

// approvalRecipe is the recipe of the approval scenario: the default recipe
// whose present_results waits for its user's approval (the demo model calls
// it when a message says "data").
const approvalRecipe = `name: approved-data
extends: default
description: The default recipe, whose presentations wait for the user's approval.
tools:
  - respond
  - tell_user
  - name: present_results
    approval: {by: user, timeout: 1h}
`

// browser is a `brain serve` with tokens (alice and bob, users; ops, an
// operator) and the built-in recipes plus approvalRecipe, on a real
// redis-server, and a headless Chromium to drive its console.
type browser struct {
	t         *testing.T
	srv       *serveProcess
	rs        *testutil.RedisServer
	ctx       context.Context // bounds the test
	bctx      context.Context // the browser's
	artifacts string          // where the screenshots go
}

// setupBrowser starts the server and the browser, or skips the test without
// Chromium (fails with BRAIN_REQUIRE_BROWSER=1). Screenshots go to
// $BRAIN_TEST_ARTIFACTS, or a temporary directory.
func setupBrowser(t *testing.T) *browser {
	t.Helper()
	chromium := requireChromium(t)
	bin := brainBinary(t)

	dir := t.TempDir()
	conf := fmt.Sprintf("recipes: recipes\nauth:\n  tokens:\n"+
		"    - {name: alice, role: user, sha256: %s}\n"+
		"    - {name: bob, role: user, sha256: %s}\n"+
		"    - {name: ops, role: operator, sha256: %s}\n",
		api.HashToken(browserTokA), api.HashToken(browserTokB), api.HashToken(browserTokOp))
	if err := os.WriteFile(filepath.Join(dir, "brain.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "recipes"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeRecipe(t, filepath.Join(dir, "recipes"), "approved-data.yaml", approvalRecipe)
	rs := testutil.StartRedis(t) // skips, or fails with BRAIN_REQUIRE_REDIS=1, without redis-server
	srv := startServe(t, bin, dir, "--redis", "redis://"+rs.Addr, "--listen", "127.0.0.1:0")
	b := openChromium(t, chromium)
	b.srv, b.rs = srv, rs
	return b
}

// requireChromium returns Chromium's path, or skips the test without it
// (fails with BRAIN_REQUIRE_BROWSER=1).
func requireChromium(t *testing.T) string {
	t.Helper()
	chromium := chromiumPath()
	if chromium == "" {
		const msg = "the browser test needs Chromium (Debian package chromium, /usr/bin/chromium); none found"
		if os.Getenv("BRAIN_REQUIRE_BROWSER") == "1" {
			t.Fatal("BRAIN_REQUIRE_BROWSER=1: " + msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	return chromium
}

// openChromium starts a headless Chromium for the test; the browser it
// returns has no server. Screenshots go to $BRAIN_TEST_ARTIFACTS, or a
// temporary directory.
func openChromium(t *testing.T, chromium string) *browser {
	t.Helper()
	artifacts := os.Getenv("BRAIN_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	return &browser{t: t, ctx: ctx, bctx: bctx, artifacts: artifacts}
}

// fail saves a screenshot and stops the test with the server's log, if
// it has a server.
func (b *browser) fail(step string, err error) {
	b.t.Helper()
	b.shot("failed")
	if b.srv == nil {
		b.t.Fatalf("%s: %v", step, err)
	}
	b.t.Fatalf("%s: %v\nserver log:\n%s", step, err, b.srv.log.String())
}

// do runs the steps; on failure it saves a screenshot and stops.
func (b *browser) do(step string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.bctx, steps...); err != nil {
		b.fail(step, err)
	}
}

// poll waits until the expression is true in the page.
func (b *browser) poll(step, expr string) {
	b.t.Helper()
	b.do(step, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0)))
}

func (b *browser) signIn(token string) {
	b.t.Helper()
	b.do("sign in",
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#signin-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#signout")),
	)
}

// shot saves a full-page screenshot named name.
func (b *browser) shot(name string) {
	b.t.Helper()
	shot(b.t, b.bctx, b.artifacts, name)
}

// viewShot saves a screenshot of the window's view, named name: of a long
// page, the part scrolled to.
func (b *browser) viewShot(name string) {
	b.t.Helper()
	shotWith(b.t, b.bctx, b.artifacts, name, chromedp.CaptureScreenshot())
}

// TestBrowser opens the console in headless Chromium against a real
// `brain serve` with tokens: user A starts a `default` process asking for
// data and sees the demo model's presentation (a table, a two-slice pie),
// clicks its action button, which posts its prompt and wakes the process;
// user B cannot see A's process; the operator sees its worker, and the
// worker's parent, cancels its timer and reads its inbox; A deletes it (two clicks), its worker too. It runs
// serve on a real redis-server, which the test also writes the worker to. Screenshots go to $BRAIN_TEST_ARTIFACTS,
// or a temporary directory, and their paths are logged.
func TestBrowser(t *testing.T) {
	b := setupBrowser(t)
	srv, rs, ctx, bctx, artifacts := b.srv, b.rs, b.ctx, b.bctx, b.artifacts
	fail, do, poll, signIn := b.fail, b.do, b.poll, b.signIn
	const tokA, tokB, tokOp = browserTokA, browserTokB, browserTokOp

	// User A signs in and starts a `default` process asking for data.
	do("open the console", chromedp.Navigate(srv.url+"/"))
	signIn(tokA)
	// The create's first answer is lost on the way (the process was made):
	// started again, it is made once.
	do("lose the create's answer", chromedp.Evaluate[chromedp.Void](loseNextAnswer(`String(url) === '/v1/processes'`)))
	do("start a process",
		chromedp.WaitVisible(chromedp.CSS("#list")),
		chromedp.WaitReady(chromedp.CSS(`#create-recipe option[value="default"]`)),
		chromedp.SetValue(chromedp.CSS("#create-recipe"), "default"),
		chromedp.SendKeys(chromedp.CSS("#create-input"), "show me the data"),
		chromedp.Click(chromedp.CSS("#create-form button[type=submit]")),
	)
	poll("the lost create's error", `(() => { const e = document.querySelector('#error'); return !e.hidden && e.textContent.includes('lost on the way'); })()`)
	do("start it again", chromedp.Click(chromedp.CSS("#create-form button[type=submit]")))
	poll("the process page", `location.hash.startsWith('#/p/')`)
	pid := inBrowser(t, bctx, fail, "read the process id", chromedp.Evaluate[string](`decodeURIComponent(location.hash.slice(4))`))
	if mine, err := api.NewClient(srv.url, tokA).ListProcesses(ctx, api.ProcessFilter{}, "", 100); err != nil || len(mine.Processes) != 1 {
		t.Errorf("A has %d processes after starting one twice (%v), want one", len(mine.Processes), err)
	}

	// The demo model presents a table and a pie chart, then answers.
	const answer = "That table and chart were built"
	// The console renders markdown asynchronously (on the server): wait
	// for the answer's code span, which only the rendered markdown has.
	poll("the demo answer", `[...document.querySelectorAll('#chat .msg.assistant')].some((e) => e.textContent.includes('`+answer+`') &&
		[...e.querySelectorAll('.md code')].some((c) => c.textContent === 'present_results'))`)
	type presented struct {
		Head   []string   `json:"head"`
		Rows   [][]string `json:"rows"`
		Slices int        `json:"slices"`
		Code   []string   `json:"code"`
	}
	got := inBrowser(t, bctx, fail, "read the presentation", chromedp.Evaluate[presented](`(() => {
		const t = document.querySelector('#chat .msg.assistant table');
		const texts = (els) => [...els].map((e) => e.textContent.trim());
		return {
			head: t ? texts(t.querySelectorAll('thead th')) : [],
			rows: t ? [...t.querySelectorAll('tbody tr')].map((r) => texts(r.cells)) : [],
			slices: document.querySelectorAll('#chat svg.chart .slice').length,
			code: texts(document.querySelectorAll('#chat .msg.assistant .md code')),
		};
	})()`))
	if want := []string{"Type", "Count", "Share"}; !slices.Equal(got.Head, want) {
		t.Errorf("the presentation table's header is %q, want %q", got.Head, want)
	}
	if want := [][]string{{"JPEG", "81", "80.2%"}, {"PNG", "20", "19.8%"}}; !slices.EqualFunc(got.Rows, want, slices.Equal) {
		t.Errorf("the presentation table's rows are %q, want %q", got.Rows, want)
	}
	if got.Slices != 2 {
		t.Errorf("the pie chart has %d slices, want 2", got.Slices)
	}
	if !slices.Contains(got.Code, "present_results") {
		t.Errorf("the answer's markdown was not rendered (code spans %q, want present_results)", got.Code)
	}

	// A GFM table rendered by the console's markdown renderer, put into
	// the page as the chat does, is a <table>.
	cells := inBrowser(t, bctx, fail, "render a GFM table", chromedp.Evaluate[[]string](`(async () => {
		const res = await fetch('/console/api/markdown', {method: 'POST', headers: {'Content-Type': 'application/json'},
			body: JSON.stringify({markdown: '| Type | Count |\n|---|--:|\n| JPEG | 81 |\n| PNG | 20 |\n'})});
		const div = document.createElement('div');
		div.className = 'md gfm-probe';
		div.innerHTML = (await res.json()).html;
		document.querySelector('#chat').appendChild(div);
		return [...div.querySelectorAll('table td')].map((e) => e.textContent);
	})()`, chromedp.EvalAwaitPromise))
	if want := []string{"JPEG", "81", "PNG", "20"}; !slices.Equal(cells, want) {
		t.Errorf("the GFM table's cells are %q, want %q", cells, want)
	}
	do("remove the GFM probe", chromedp.Evaluate[chromedp.Void](`document.querySelector('.gfm-probe').remove()`))
	shot(t, bctx, artifacts, "1-presentation")

	// The action button posts its prompt; the process wakes and answers.
	const prompt = "Show me more data"
	do("click the action", chromedp.Click(chromedp.CSS(`#chat .actions button[title="`+prompt+`"]`)))
	poll("the answer to the action", `(() => {
		const msgs = [...document.querySelectorAll('#chat .msg')];
		const i = msgs.findIndex((m) => m.classList.contains('user') && m.textContent.includes('`+prompt+`') && !m.textContent.startsWith('queued'));
		return i >= 0 && msgs.slice(i + 1).some((m) => m.classList.contains('assistant') && m.textContent.includes('`+answer+`'));
	})()`)
	poll("no queued bubble left", `![...document.querySelectorAll('#chat .msg.user')].some((m) => m.textContent.startsWith('queued'))`)
	shot(t, bctx, artifacts, "2-action")
	apiCtx, apiCancel := context.WithTimeout(ctx, e2eTimeout)
	defer apiCancel()
	page, err := api.NewClient(srv.url, tokA).Events(apiCtx, pid, "user", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	posted := false
	for _, e := range page.Events {
		if m := e.InboxMessage; m != nil && m.Content == prompt {
			posted = true
		}
	}
	if !posted {
		t.Errorf("%s's log has no message %q after the click", pid, prompt)
	}

	// A message whose answer is lost on the way (it reached the server)
	// and that is sent again is stored once: it keeps its key.
	const resent = "Sent twice, stored once"
	do("lose the next message's answer", chromedp.Evaluate[chromedp.Void](loseNextAnswer(`String(url).endsWith('/messages')`)))
	do("send a message", chromedp.SetValue(chromedp.CSS("#message"), resent), chromedp.Click(chromedp.CSS("#message-form button[type=submit]")))
	poll("the lost answer's error", `(() => { const e = document.querySelector('#error'); return !e.hidden && e.textContent.includes('lost on the way'); })()`)
	do("send it again", chromedp.Click(chromedp.CSS("#message-form button[type=submit]")))
	poll("the answer to it", `(() => {
		const msgs = [...document.querySelectorAll('#chat .msg')];
		const i = msgs.findIndex((m) => m.classList.contains('user') && m.textContent.includes('`+resent+`') && !m.textContent.startsWith('queued'));
		return i >= 0 && msgs.slice(i + 1).some((m) => m.classList.contains('assistant'));
	})()`)
	page, err = api.NewClient(srv.url, tokA).Events(apiCtx, pid, "user", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, e := range page.Events {
		if m := e.InboxMessage; m != nil && m.Content == resent {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("the message sent twice is in the log %d times, want once", stored)
	}

	// User B cannot see A's process: the page says not found, the API 404.
	do("sign out", chromedp.Click(chromedp.CSS("#signout")))
	signIn(tokB)
	do("open A's process as B", chromedp.Evaluate[chromedp.Void](`location.hash = '#/p/' + encodeURIComponent('`+pid+`')`))
	poll("not found", `(() => { const e = document.querySelector('#error'); return !e.hidden && /not found/i.test(e.textContent); })()`)
	chat := inBrowser(t, bctx, fail, "read B's chat", chromedp.Text(chromedp.CSS("#chat"), chromedp.NodeReady))
	if strings.Contains(chat, answer) {
		t.Errorf("user B sees A's process: %q", chat)
	}
	shot(t, bctx, artifacts, "3-other-user")
	do("B's list", chromedp.Evaluate[chromedp.Void](`document.querySelector('#states').textContent = ''; location.hash = '#/'`))
	poll("B's list", `!document.querySelector('#list').hidden && document.querySelectorAll('#states h2').length > 0`)
	list := inBrowser(t, bctx, fail, "read B's list", chromedp.Text(chromedp.CSS("#states"), chromedp.NodeReady))
	if strings.Contains(list, pid) {
		t.Errorf("user B's list shows A's process %s:\n%s", pid, list)
	}

	for _, c := range []struct {
		who, token string
		want       int
	}{{"user A", tokA, http.StatusOK}, {"user B", tokB, http.StatusNotFound}, {"the operator", tokOp, http.StatusOK}} {
		req, err := http.NewRequestWithContext(apiCtx, http.MethodGet, srv.url+"/v1/processes/"+pid, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET /v1/processes/%s as %s: %s, want %d", pid, c.who, resp.Status, c.want)
		}
	}

	// A worker of A's process (only a turn's spawn_worker makes one; the
	// demo model spawns none): the operator sees it on the process's page
	// and, on the worker's, its parent.
	st, err := store.New(rs.Client(t), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	worker := st.WorkerID(pid, "p_browser_worker") // in its parent's partition
	if _, err := st.Create(apiCtx, store.NewProcess{ID: worker, Recipe: "marvin-worker", Engine: "worker", Parent: pid, Depth: 1}); err != nil {
		t.Fatal(err)
	}
	// What its model calls used (the demo model reports none), in all and
	// on 2026-03-01 (day 20513), and the events a recipe's
	// limits.max_log_events trimmed, as a commit counts them.
	if err := rs.Client(t).HSet(apiCtx, store.Key(store.DefaultPartitions, pid, "proc"), "tokens_in", 12345, "tokens_out", 678, "tokens_day", "20513:2100",
		"trimmed", 250).Err(); err != nil {
		t.Fatal(err)
	}
	// And a timer on it, which the operator sees and cancels there.
	timer, err := api.NewClient(srv.url, tokOp).ScheduleTimer(apiCtx, pid, api.TimerRequest{In: "1h", Message: "check the build"})
	if err != nil {
		t.Fatal(err)
	}
	do("sign out B", chromedp.Click(chromedp.CSS("#signout")))
	signIn(tokOp)
	poll("its tokens in the list", `[...document.querySelectorAll('#states tr')].some((tr) =>
		tr.textContent.includes('`+pid+`') && tr.textContent.includes('12.3k in, 678 out'))`)
	// The list shows one recipe's processes when asked.
	do("show the workers' recipe", chromedp.SetValue(chromedp.CSS("#list-recipe"), "marvin-worker"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#list-recipe').dispatchEvent(new Event('change'))`))
	listed := `[...document.querySelectorAll('#states tbody tr')].map((tr) => tr.cells[0].textContent)`
	poll("only the worker", `(() => { const ids = `+listed+`; return ids.length === 1 && ids[0] === '`+worker+`'; })()`)
	do("show every recipe", chromedp.SetValue(chromedp.CSS("#list-recipe"), ""),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#list-recipe').dispatchEvent(new Event('change'))`))
	poll("the process again", listed+`.includes('`+pid+`')`)
	do("open A's process as the operator", chromedp.Evaluate[chromedp.Void](`location.hash = '#/p/' + encodeURIComponent('`+pid+`')`))
	poll("the workers", `(() => { const f = document.querySelector('#p-family');
		return !f.hidden && [...f.querySelectorAll('a')].some((a) => a.textContent === '`+worker+`') && f.textContent.includes('BLOCKED'); })()`)
	poll("its tokens and trimmed events", `(() => { const r = document.querySelector('#p-recipe').textContent;
		return r.includes('12.3k tokens in, 678 out (2.1k on 2026-03-01)') && r.includes('its oldest 250 events deleted'); })()`)
	poll("the timer", `(() => { const f = document.querySelector('#p-timers');
		return !f.hidden && f.textContent.includes('check the build') && f.querySelector('button[data-timer="`+timer.ID+`"]') !== null; })()`)
	shot(t, bctx, artifacts, "4-workers")
	do("cancel the timer", chromedp.Click(chromedp.CSS(`#p-timers button[data-timer="`+timer.ID+`"]`)))
	poll("no timer left", `document.querySelector('#p-timers').hidden`)
	if left, err := api.NewClient(srv.url, tokOp).Timers(apiCtx, pid); err != nil || len(left) != 0 {
		t.Errorf("timers after the console's cancel: %+v, %v; want none", left, err)
	}
	// Paused, the process keeps A's next message in its inbox, which the
	// operator sees.
	if _, err := api.NewClient(srv.url, tokOp).Control(apiCtx, pid, "pause"); err != nil {
		t.Fatal(err)
	}
	if _, err := api.NewClient(srv.url, tokA).Send(apiCtx, pid, "are you there?", ""); err != nil {
		t.Fatal(err)
	}
	poll("the waiting message", `(() => { const f = document.querySelector('#p-inbox');
		return !f.hidden && f.textContent.includes('are you there?'); })()`)
	// The page lists the first 20 waiting messages, a long one cut, and
	// says how many more wait.
	for i := range 21 {
		text := fmt.Sprintf("message %d", i+2)
		if i == 0 {
			text = strings.Repeat("long ", 60)
		}
		if _, err := api.NewClient(srv.url, tokA).Send(apiCtx, pid, text, ""); err != nil {
			t.Fatal(err)
		}
	}
	poll("twenty waiting messages and two more", `(() => { const f = document.querySelector('#p-inbox');
		const shown = [...f.querySelectorAll('.waiting')];
		return shown.length === 20 && f.textContent.includes('+2 more') &&
			shown.some((s) => s.textContent.endsWith('…')) && shown.every((s) => s.textContent.length < 230); })()`)
	do("open the worker", chromedp.Click(chromedp.CSS(`#p-family a[href="#/p/`+worker+`"]`)))
	poll("its parent", `(() => { const f = document.querySelector('#p-family');
		return location.hash === '#/p/`+worker+`' && !f.hidden && f.textContent.includes('worker of') &&
			[...f.querySelectorAll('a')].some((a) => a.textContent === '`+pid+`'); })()`)

	// User A deletes her process: the first click arms the button, the
	// second deletes it, its worker too, and goes back to the list.
	do("sign out the operator", chromedp.Click(chromedp.CSS("#signout")))
	signIn(tokA)
	do("open A's process again", chromedp.Evaluate[chromedp.Void](`location.hash = '#/p/' + encodeURIComponent('`+pid+`')`))
	poll("the process page again", `!document.querySelector('#process').hidden && document.querySelector('#p-state').textContent !== ''`)
	do("arm delete", chromedp.Click(chromedp.CSS("#p-delete")))
	poll("the armed button", `document.querySelector('#p-delete').classList.contains('armed')`)
	if _, err := api.NewClient(srv.url, tokA).GetProcess(apiCtx, pid); err != nil {
		t.Errorf("the process after one click on Delete: %v, want it still there", err)
	}
	shot(t, bctx, artifacts, "5-delete-armed")
	do("delete", chromedp.Click(chromedp.CSS("#p-delete")))
	poll("back to the list", `location.hash === '#/' && !document.querySelector('#list').hidden`)
	if _, err := api.NewClient(srv.url, tokA).GetProcess(apiCtx, pid); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the process after Delete: %v, want 404", err)
	}
	if _, err := api.NewClient(srv.url, tokOp).GetProcess(apiCtx, worker); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("its worker after Delete: %v, want 404", err)
	}
}

// TestBrowserApproval drives the console through tool approvals: user A
// starts a process of approvalRecipe asking for data; the demo model's
// present_results waits for her approval, which the page shows (the tool,
// its arguments, the badge, in the list too). She approves it and the
// process goes on: the presentation and the answer appear. Her next
// request is decided by the operator (through the API, the process paused)
// while her page still shows it: her click on Approve shows the API's 409.
// Her third she rejects, which needs a reason, typed inline. The operator's
// raw view then says what was asked and decided.
func TestBrowserApproval(t *testing.T) {
	b := setupBrowser(t)
	srv := b.srv
	apiCtx, apiCancel := context.WithTimeout(b.ctx, e2eTimeout)
	defer apiCancel()
	alice, ops := api.NewClient(srv.url, browserTokA), api.NewClient(srv.url, browserTokOp)
	const answer = "That table and chart were built" // the demo model's answer after its presentation

	b.do("open the console", chromedp.Navigate(srv.url+"/"))
	b.signIn(browserTokA)
	b.do("start a process",
		chromedp.WaitVisible(chromedp.CSS("#list")),
		chromedp.WaitReady(chromedp.CSS(`#create-recipe option[value="approved-data"]`)),
		chromedp.SetValue(chromedp.CSS("#create-recipe"), "approved-data"),
		chromedp.SendKeys(chromedp.CSS("#create-input"), "show me the data"),
		chromedp.Click(chromedp.CSS("#create-form button[type=submit]")),
	)
	b.poll("the process page", `location.hash.startsWith('#/p/')`)
	pid := inBrowser(t, b.bctx, b.fail, "read the process id", chromedp.Evaluate[string](`decodeURIComponent(location.hash.slice(4))`))

	// The call waits: its card shows the tool and its arguments as text.
	cards := `[...document.querySelectorAll('#p-approvals .approval')]`
	b.poll("the pending call", `(() => { const cs = `+cards+`;
		return !document.querySelector('#p-approvals').hidden && cs.length === 1 &&
			cs[0].querySelector('.tool').textContent === 'present_results' &&
			cs[0].querySelector('.when').textContent.includes('the user or an operator decides') &&
			!document.querySelector('#p-waiting').hidden && document.querySelector('#p-state').textContent === 'BLOCKED'; })()`)
	type card struct {
		Summary  string   `json:"summary"`
		Elements int      `json:"elements"` // element children of the arguments' <pre>: none when escaped
		Buttons  []string `json:"buttons"`
	}
	got := inBrowser(t, b.bctx, b.fail, "read the card", chromedp.Evaluate[card](`(() => {
		const c = document.querySelector('#p-approvals .approval');
		const pre = c.querySelector('pre.args');
		return {
			summary: JSON.parse(pre.textContent).summary || '',
			elements: pre.children.length,
			buttons: [...c.querySelectorAll('button')].map((b) => b.textContent),
		};
	})()`))
	if want := "An example presentation: 101 media files, 81 JPEG and 20 PNG."; got.Summary != want || got.Elements != 0 {
		t.Errorf("the card's arguments: summary %q with %d elements, want %q as text", got.Summary, got.Elements, want)
	}
	if want := []string{"Approve", "Reject"}; !slices.Equal(got.Buttons, want) {
		t.Errorf("the card's buttons are %q, want %q", got.Buttons, want)
	}
	if p, err := alice.GetProcess(apiCtx, pid); err != nil || p.WaitingFor != "approval" || len(p.Approvals) != 1 {
		t.Fatalf("the process as the page shows it: %+v, %v; want it waiting for one approval", p, err)
	}
	b.poll("the chat's note of the request", `[...document.querySelectorAll('#chat .msg.note')].some((m) =>
		m.textContent.includes('approval requested: present_results (decided by user'))`)
	b.shot("approval-1-pending")

	// The list shows the badge on the process's row.
	b.do("the list", chromedp.Evaluate[chromedp.Void](`location.hash = '#/'`))
	b.poll("the badge in the list", `[...document.querySelectorAll('#states tr')].some((tr) =>
		tr.cells[0].textContent === '`+pid+`' && tr.querySelector('.badge.waiting') !== null)`)
	b.shot("approval-2-list")
	b.do("open the process", chromedp.Click(chromedp.CSS(`#states a[href="#/p/`+pid+`"]`)))
	b.poll("the pending call again", cards+`.length === 1`)

	// Approved, the call runs and the process goes on to its answer.
	b.do("approve", chromedp.Click(chromedp.CSS(`#p-approvals .approval button[data-decision="approve"]`)))
	answers := `[...document.querySelectorAll('#chat .msg.assistant')].filter((m) => m.textContent.includes('` + answer + `')).length`
	b.poll("the presentation and the answer", `(() => document.querySelector('#chat .msg.assistant table') !== null &&
		`+answers+` === 1 && document.querySelector('#p-approvals').hidden && document.querySelector('#p-waiting').hidden)()`)
	b.shot("approval-3-approved")

	// The next request is decided by the operator while A's page shows it
	// (the process paused, the decision waits in its inbox): A's click
	// gets the API's 409, which the page shows.
	if _, err := alice.Send(apiCtx, pid, "more data, please", ""); err != nil {
		t.Fatal(err)
	}
	b.poll("the second call", cards+`.length === 1 && !document.querySelector('#p-waiting').hidden`)
	if _, err := ops.Control(apiCtx, pid, "pause"); err != nil {
		t.Fatal(err)
	}
	p, err := ops.GetProcess(apiCtx, pid)
	if err != nil || len(p.Approvals) != 1 {
		t.Fatalf("the paused process: %+v, %v; want one call waiting", p, err)
	}
	decideAs(t, apiCtx, srv.url, browserTokOp, pid, p.Approvals[0].CallID, `{"decision": "approve"}`, http.StatusAccepted)
	b.poll("the page shows the paused process", `document.querySelector('#p-state').textContent.startsWith('PAUSED') && `+cards+`.length === 1`)
	b.do("approve it too", chromedp.Click(chromedp.CSS(`#p-approvals .approval button[data-decision="approve"]`)))
	b.poll("the 409's message", `(() => { const e = document.querySelector('#error');
		return !e.hidden && e.textContent.includes('decided already'); })()`)
	b.shot("approval-4-conflict")
	if _, err := ops.Control(apiCtx, pid, "resume"); err != nil {
		t.Fatal(err)
	}
	b.poll("the operator's approval applied", answers+` === 2 && document.querySelector('#p-approvals').hidden`)

	// Rejecting needs a reason, asked for inline; with it, the process goes
	// on (the model reads the rejection and answers).
	if _, err := alice.Send(apiCtx, pid, "and the data once more", ""); err != nil {
		t.Fatal(err)
	}
	b.poll("the third call", cards+`.length === 1`)
	reject := chromedp.CSS(`#p-approvals .approval button[data-decision="reject"]`)
	b.do("reject without a reason", chromedp.Click(reject))
	b.poll("the reason asked for", `(() => { const i = document.querySelector('#p-approvals .approval input.reason');
		return i.classList.contains('needed') && document.activeElement === i; })()`)
	if p, err := alice.GetProcess(apiCtx, pid); err != nil || len(p.Approvals) != 1 {
		t.Errorf("after Reject without a reason: %+v, %v; want the call still waiting", p, err)
	}
	b.shot("approval-5-reason")
	const reason = "not <b>now</b>, thanks"
	b.do("reject with a reason", chromedp.SendKeys(chromedp.CSS(`#p-approvals .approval input.reason`), reason), chromedp.Click(reject))
	b.poll("the answer after the rejection", answers+` === 3 && document.querySelector('#p-approvals').hidden && document.querySelector('#p-waiting').hidden`)

	page, err := ops.Events(apiCtx, pid, "raw", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, e := range page.Events {
		if d := e.ApprovalDecided; d != nil {
			decisions = append(decisions, fmt.Sprintf("%s by %s: %s", d.Decision, e.By, d.Reason))
		}
	}
	if want := []string{"approve by user:alice: ", "approve by operator:ops: ", "reject by user:alice: " + reason}; !slices.Equal(decisions, want) {
		t.Errorf("the decisions in the log: %q, want %q", decisions, want)
	}

	// The operator's raw view says what was asked and decided.
	b.do("sign out", chromedp.Click(chromedp.CSS("#signout")))
	b.signIn(browserTokOp)
	b.do("open the process as the operator", chromedp.Evaluate[chromedp.Void](`location.hash = '#/p/' + encodeURIComponent('`+pid+`')`))
	b.poll("the process page", `!document.querySelector('#process').hidden && document.querySelector('#p-state').textContent !== ''`)
	b.do("the raw view", chromedp.Click(chromedp.CSS("#p-raw")))
	b.poll("the approval lines", `(() => { const notes = [...document.querySelectorAll('#raw .note')].map((n) => n.textContent);
		return notes.filter((n) => n.startsWith('approval requested: present_results {')).length === 3 &&
			notes.some((n) => n.startsWith('approved by user:alice')) && notes.some((n) => n.startsWith('approved by operator:ops')) &&
			notes.some((n) => n.startsWith('rejected by user:alice: `+reason+`')); })()`)
	b.do("scroll to the last decision", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('#raw .note')].pop().scrollIntoView({block: 'center'})`))
	b.viewShot("approval-6-raw")
}

// decideAs posts a decision (body) on call of process pid with token and
// checks the answer's status.
func decideAs(t *testing.T, ctx context.Context, url, token, pid, call, body string, want int) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/processes/"+pid+"/approvals/"+call, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("POST %s as %s: %s %s, want %d", req.URL.Path, token, resp.Status, msg, want)
	}
}

// loseNextAnswer is a script that makes the page's next POST whose url
// matches (a JavaScript condition on url) reach the server and then fail,
// as when its answer is lost on the way.
func loseNextAnswer(matches string) string {
	return `(() => {
		const real = window.fetch;
		let lose = true;
		window.fetch = async (url, init) => {
			const res = await real(url, init);
			if (lose && init && init.method === 'POST' && ` + matches + `) {
				lose = false;
				throw new TypeError('the answer was lost on the way');
			}
			return res;
		};
	})()`
}

// inBrowser runs the action in the browser and returns its value; on failure
// it calls fail, which stops the test.
func inBrowser[T any](t *testing.T, ctx context.Context, fail func(string, error), step string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		fail(step, err)
	}
	return v
}

// shot saves a full-page screenshot as dir/browser-name.png and logs its
// path; a failure to take it is logged, not fatal.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	shotWith(t, ctx, dir, name, chromedp.FullScreenshot(100))
}

// shotWith is shot with the screenshot that take takes.
func shotWith(t *testing.T, ctx context.Context, dir, name string, take chromedp.Action[[]byte]) {
	t.Helper()
	png, err := chromedp.Run(ctx, take)
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, "browser-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

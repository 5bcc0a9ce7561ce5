package main

import (
	"context"
	"fmt"
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

// browserTimeout bounds the whole browser test, Chromium's start included.
const browserTimeout = 60 * time.Second

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

// TestBrowser opens the console in headless Chromium against a real
// `brain serve` with tokens: user A starts a `default` process asking for
// data and sees the demo model's presentation (a table, a two-slice pie),
// clicks its action button, which posts its prompt and wakes the process;
// user B cannot see A's process; the operator sees its worker, and the
// worker's parent, cancels its timer and reads its inbox; A deletes it (two clicks), its worker too. It runs
// serve on a real redis-server, which the test also writes the worker to. Screenshots go to $BRAIN_TEST_ARTIFACTS,
// or a temporary directory, and their paths are logged.
func TestBrowser(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		const msg = "the browser test needs Chromium (Debian package chromium, /usr/bin/chromium); none found"
		if os.Getenv("BRAIN_REQUIRE_BROWSER") == "1" {
			t.Fatal("BRAIN_REQUIRE_BROWSER=1: " + msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	bin := brainBinary(t)

	const tokA, tokB, tokOp = "browser-alice-token", "browser-bob-token", "browser-ops-token"
	dir := t.TempDir()
	conf := fmt.Sprintf("auth:\n  tokens:\n"+
		"    - {name: alice, role: user, sha256: %s}\n"+
		"    - {name: bob, role: user, sha256: %s}\n"+
		"    - {name: ops, role: operator, sha256: %s}\n",
		api.HashToken(tokA), api.HashToken(tokB), api.HashToken(tokOp))
	if err := os.WriteFile(filepath.Join(dir, "brain.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := testutil.StartRedis(t) // skips, or fails with BRAIN_REQUIRE_REDIS=1, without redis-server
	srv := startServe(t, bin, dir, "--redis", "redis://"+rs.Addr, "--listen", "127.0.0.1:0")

	artifacts := os.Getenv("BRAIN_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
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
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	// do runs the steps; on failure it saves a screenshot and stops.
	fail := func(step string, err error) {
		t.Helper()
		shot(t, bctx, artifacts, "failed")
		t.Fatalf("%s: %v\nserver log:\n%s", step, err, srv.log.String())
	}
	do := func(step string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			fail(step, err)
		}
	}
	// poll waits until the expression is true in the page.
	poll := func(step, expr string) {
		t.Helper()
		do(step, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0)))
	}
	signIn := func(token string) {
		t.Helper()
		do("sign in",
			chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), token),
			chromedp.Click(chromedp.CSS("#signin-form button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS("#signout")),
		)
	}

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
	if _, err := st.Create(apiCtx, store.NewProcess{ID: "p_browser_worker", Recipe: "marvin-worker", Engine: "worker", Parent: pid, Depth: 1}); err != nil {
		t.Fatal(err)
	}
	// What its model calls used (the demo model reports none), in all and
	// on 2026-03-01 (day 20513), and the events a recipe's
	// limits.max_log_events trimmed, as a commit counts them.
	if err := rs.Client(t).HSet(apiCtx, "brain:{"+pid+"}:proc", "tokens_in", 12345, "tokens_out", 678, "tokens_day", "20513:2100",
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
	poll("only the worker", `(() => { const ids = `+listed+`; return ids.length === 1 && ids[0] === 'p_browser_worker'; })()`)
	do("show every recipe", chromedp.SetValue(chromedp.CSS("#list-recipe"), ""),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#list-recipe').dispatchEvent(new Event('change'))`))
	poll("the process again", listed+`.includes('`+pid+`')`)
	do("open A's process as the operator", chromedp.Evaluate[chromedp.Void](`location.hash = '#/p/' + encodeURIComponent('`+pid+`')`))
	poll("the workers", `(() => { const f = document.querySelector('#p-family');
		return !f.hidden && [...f.querySelectorAll('a')].some((a) => a.textContent === 'p_browser_worker') && f.textContent.includes('BLOCKED'); })()`)
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
	do("open the worker", chromedp.Click(chromedp.CSS(`#p-family a[href="#/p/p_browser_worker"]`)))
	poll("its parent", `(() => { const f = document.querySelector('#p-family');
		return location.hash === '#/p/p_browser_worker' && !f.hidden && f.textContent.includes('worker of') &&
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
	if _, err := api.NewClient(srv.url, tokOp).GetProcess(apiCtx, "p_browser_worker"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("its worker after Delete: %v, want 404", err)
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
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
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

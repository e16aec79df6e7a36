// The morning at keyboard speed, with the daemon embedded in the app and the real `claude`
// binary against the scripted Anthropic mock. Overnight three lines in three projects each
// journal their questions (4 + 3 + 3) and the judge validates all ten. In the morning the
// Review page is opened and every question is answered with WebDriver key actions only (no
// click): digits for options, `о` (the Russian letter on the J key) to skip one and come back
// to it at the end, `e` + text + Enter for one free answer. One answer is then changed with `c`
// and a digit before its line's `answer` step starts; the answers reach their lines' sessions
// and the mock sees only the changed one of the two. `?` shows the keys, `a` accepts a line
// that merged after its answers, and `o` opens a question's line on the Lines page. The time
// from the page opening to the last answer confirmed is printed as `morning figures: …` (see
// docs/benchmarks/pult.md); screenshots go to tests/artifacts/.
//
// Why "before its step starts" is deterministic here: the embedded daemon runs with
// `slots = 1`, and a fourth line in a fourth project (no questions; queued only once the three
// others wait for their answers) is held by the mock at its first
// turn (`hold: true`) until the test releases its session. It holds the only slot all morning:
// no `answer` step can start before the release, so every answer — the changed one too — is
// still changeable, and the test releases it only after the change. (An answer step is queued
// at a line's first answer; without the held line it would start at once.)
//
// The judge runs in a fresh session per run, so its verdicts come from one kind-"judge" script
// holding a verdict per line, each written only when the prompt carries that line's entries
// (`judgeVerdict(.., { onlyIfAsked: true })`): the lines' ids are not known when it is scripted.
// The agents' steps pick their journal by the line's title, from the step's prompt.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, makeHome, screenshot } from './harness.mjs';
import {
  CLAUDE,
  bash,
  embeddedConnected,
  judgeVerdict,
  launchEmbedded,
  makeRepo,
  startMock,
  text,
  writePlan,
} from './support.mjs';
import { Key, WAIT_MS } from './webdriver.mjs';

const TOKEN = 'morning-token-0123456789';

/** Three lines, one per project, and the questions each journals (10 in all). */
const LINES = {
  alpha: [
    ['Which port should the alpha service listen on?', ['8080', '9090']],
    ['Keep the alpha cache in memory or on disk?', ['memory', 'disk']],
    ['Name the alpha config file?', ['alpha.toml', 'config.toml']],
    ['Log alpha requests at info or debug?', ['info', 'debug']],
  ],
  beta: [
    ['Retry failed beta uploads?', ['yes', 'no']],
    ['Beta page size?', ['20', '50', '100']],
    ['Store beta dates in UTC?', ['yes', 'no']],
  ],
  gamma: [
    ['Gamma theme colour?', ['blue', 'green']],
    ['Drop the gamma legacy flag?', ['drop', 'keep']],
    ['Gamma timeout in seconds?', ['10', '30']],
  ],
};
const FREE = 'call it whatever the README says';
/** The fourth line: still busy in the morning, it holds the only slot. */
const BUSY = 'delta';

let app;
let mock;
let dirs;
let url;
const lineIds = {};

async function api(p, init = {}) {
  const r = await fetch(`${url}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  dirs = makeHome('morning');
  // Each line's executor appends its title's questions to its journal (the title is in the
  // step's prompt). They travel in the command itself: the agent runs in its sandbox, where a
  // file the test left in /tmp is not there (the run has a /tmp of its own).
  const cases = Object.entries(LINES)
    .map(([title, questions]) => {
      const entries = questions.map(([q, options]) =>
        JSON.stringify({ kind: 'question', text: q, options, default: options[0], why: 'scripted', reversible: true, expensive: false }),
      );
      return `${title}) printf '%s\\n' ${entries.map((e) => `'${e}'`).join(' ')} ;;`;
    })
    .join(' ');
  mock = await startMock();
  await mock.script('*', {
    1: [writePlan({ level: 'light', steps: [{ title: 'work', task: 'ask first', checks: [] }] }), text('planned')],
    2: [bash(`case "{{prompt:line [\\w-]+ .(\\w+).}}" in ${cases} esac >> "$CONVEYOR_JOURNAL"`), text('asked')],
  });
  // Every judge run: the verdict of its own line (the others' Writes get no path and fail).
  await mock.scriptKind('judge', {
    '*': [
      ...Object.values(LINES).map((qs) =>
        judgeVerdict(
          qs.map(([q]) => [q, 'validated', 'only Anton knows']),
          { onlyIfAsked: true },
        ),
      ),
      text('judged'),
    ],
  });
  await mock.scriptKind('answer', { '*': [text('answers taken')] });

  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // The embedded daemon on a known port and token, so the test can set up the night through
  // its API; one slot (see above).
  ({ app } = await launchEmbedded(dirs, mock, `listen = "127.0.0.1:${port}"\ntoken = "${TOKEN}"\nslots = 1\n`));
});

after(async () => {
  await app?.stop();
  mock?.stop();
});

/** What the mock saw and where the lines stand: said when a wait for the answers fails. */
async function night() {
  const seen = (await mock.log())
    .filter((x) => x.kind === 'messages' && !x.side)
    .map((x) => `${x.line} ${x.step_kind} ${x.step}.${x.attempt} turn ${x.turn}${x.held ? ' held' : ''} ${(x.conversation.match(/- Q: .*\n  A: .*/g) ?? []).join(' | ')}`);
  const lines = await Promise.all(Object.values(lineIds).map((id) => api(`/api/lines/${id}`)));
  return [...seen, ...lines.map((l) => `${l.title}: ${l.state} ${l.steps.map((st) => `${st.kind}:${st.state}`).join(' ')}`)].join('\n');
}

/** Polls `probe` every 10 ms (the keys' timing is measured, so the waits must be fine). */
function soon(probe, what, timeoutMs = WAIT_MS) {
  return app.driver.until(probe, what, timeoutMs, 10);
}

/** The focused question's id (null when the focus is not on a question card). */
const focused = (d) =>
  d.script("const c = document.activeElement?.closest('[data-testid=question]'); return c && c === document.activeElement ? c.dataset.questionId : null;");

/** The cards in the page's order. */
const cards = (d) =>
  d.script(
    "return [...document.querySelectorAll('[data-testid=question]')].map((c) => ({ id: c.dataset.questionId, line: c.dataset.lineId, status: c.dataset.status, changeable: c.dataset.changeable, text: c.querySelector('.text').textContent, options: [...c.querySelectorAll('[data-testid=option-button]')].map((b) => b.dataset.option), answer: c.querySelector('[data-testid=question-answer]')?.textContent ?? null }));",
  );

test('ten questions over three projects answered with keys only; one changed before its step starts', async () => {
  const d = app.driver;
  await embeddedConnected(d);

  // The night: three projects, a line on each; the judge validates every question. A fourth
  // line, queued when the three wait, is held at its first turn.
  const queue = async (title, priority) => {
    const repo = path.join(dirs.home, `${title} repo`);
    makeRepo(repo, { 'README.md': `${title}\n` });
    const p = await api('/api/projects', { method: 'POST', body: JSON.stringify({ name: title, repo_path: repo }) });
    return api('/api/lines', { method: 'POST', body: JSON.stringify({ project_id: p.id, title, task: `Work on ${title}.`, priority }) });
  };
  for (const title of Object.keys(LINES)) lineIds[title] = (await queue(title, 0)).id;
  await d
    .until(
      async () => {
        const lines = await Promise.all(Object.values(lineIds).map((id) => api(`/api/lines/${id}`)));
        const review = await api('/api/review');
        const open = review.projects.flatMap((p) => p.questions).length;
        return lines.every((l) => l.state === 'waiting_answer') && open === 10;
      },
      'three lines waiting for the answers to ten validated questions',
      400000,
    )
    .catch(async (e) => {
      throw new Error(`${e.message}\n${await night()}`);
    });
  // Queued only now, so nothing but the three waiting lines can let it into the slot first.
  // Its planner is held whenever its first request comes: the planner's script is set for any
  // line before it is queued (the three others are past planning), and its line's own script
  // (the same first step, then the rest) after, when its id is known.
  const heldPlan = [{ ...writePlan({ level: 'light', steps: [{ title: 'work', task: 'work', checks: [] }] }), hold: true }, text('planned')];
  await mock.scriptKind('planner', { 1: heldPlan });
  const busy = await queue(BUSY, -1);
  await mock.scriptLine(busy.id, { 1: heldPlan, '*': [text('done')] });
  // The fourth line holds the only slot: no answer step can start until it is released.
  const held = await d.until(
    async () => (await mock.log()).find((e) => e.line === busy.id && e.held),
    'the fourth line held at its first turn',
    120000,
  );

  // The morning: the Review page opened from the keyboard (the nav button focused, Enter).
  await d.script("document.querySelector('[data-testid=nav-review]').focus();");
  const t0 = Date.now();
  await d.keys(Key.ENTER);
  await soon(() => focused(d), 'the first question focused');
  const tReady = Date.now();
  const order = await cards(d);
  assert.equal(order.length, 10);
  assert.ok(order.every((c) => c.status === 'validated'));
  assert.equal(await d.script("return document.querySelector('[data-testid=review-progress]').dataset.total;"), '10');
  const glance = await d.script(
    "return Object.fromEntries([...document.querySelectorAll('[data-testid=glance-lines]')].map((b) => [b.dataset.filter, b.dataset.count]));",
  );
  assert.deepEqual(glance, { awaiting_acceptance: '0', running: '1', waiting_answer: '3', needs_human: '0', rolled_back: '0' });
  await screenshot(d, 'morning-review');

  // The keys, and what each question is answered with: digits mostly, one free answer, one
  // skipped with `о` (J on a Russian layout) and answered last, after the focus comes round.
  const given = {};
  const byIndex = (i) => order[i];
  const press = async (keys, expectFocus, what) => {
    await d.keys(...keys);
    if (expectFocus) await soon(async () => (await focused(d)) === expectFocus, what);
  };
  /** Walks the focus to card `id` of `list` (the page's order) with j and k. */
  const walkTo = async (list, id) => {
    const from = await focused(d);
    let at = list.findIndex((c) => c.id === from);
    const to = list.findIndex((c) => c.id === id);
    while (at !== to) {
      const k = at < to ? 'j' : 'k';
      at += at < to ? 1 : -1;
      await press([k], list[at].id, `${k} to ${list[at].id}`);
    }
  };
  assert.equal(await focused(d), byIndex(0).id);
  const plan = [
    [0, '1'],
    [1, '2'],
    [2, 'skip'],
    [3, '1'],
    [4, 'free'],
    [5, '2'],
    [6, '1'],
    [7, '2'],
    [8, '1'],
    [9, '2'],
    [2, '2'],
  ];
  for (let s = 0; s < plan.length; s++) {
    const [i, how] = plan[s];
    const q = byIndex(i);
    const next = plan[s + 1] ? byIndex(plan[s + 1][0]).id : null;
    if (how === 'skip') {
      await press(['о'], next, `the focus moved on from ${q.id} by о`);
    } else if (how === 'free') {
      await press(['e'], null);
      await soon(() => d.script("return document.activeElement?.dataset.testid === 'answer-text';"), 'the answer box focused');
      await press([FREE, Key.ENTER], next, `the free answer sent from the box`);
      given[q.id] = FREE;
    } else {
      given[q.id] = q.options[Number(how) - 1];
      await press([how], next, `${q.id} answered with ${how}`);
    }
  }
  await soon(
    async () => (await d.script("return document.querySelector('[data-testid=review-progress]').dataset.answered;")) === '10',
    'ten answers confirmed',
  );
  const tDone = Date.now();
  assert.ok(await d.script("return !!document.querySelector('[data-testid=review-done]');"), 'the morning is done');
  const answeredNow = await cards(d);
  for (const c of answeredNow) assert.equal(c.answer, `Ответ: ${given[c.id]}`, c.text);
  await screenshot(d, 'morning-review-done');
  console.log(
    `morning figures: page opened -> first question focused ${tReady - t0} ms; page opened -> 10th answer confirmed ${tDone - t0} ms (10 answers by WebDriver key actions: 9 option digits, one skip by о and back, one free answer: e, ${FREE.length} characters, Enter)`,
  );

  // Every answer is still changeable: no answer step could start.
  const now = await cards(d);
  assert.deepEqual(now.map((c) => c.changeable), now.map(() => 'true'));
  assert.ok(!(await mock.log()).some((e) => e.step_kind === 'answer'), 'no answer step has started');
  const progress = () => d.script("return document.querySelector('[data-testid=review-progress]').dataset.answered;");
  // One answer taken back with `u`: the question is open again, and answered again by key.
  const back = now.find((c) => given[c.id] !== FREE && c.line === now[now.length - 1].line);
  await walkTo(now, back.id);
  await press(['u'], null);
  await soon(async () => (await cards(d)).find((c) => c.id === back.id)?.status === 'validated', 'the answer taken back');
  assert.equal(await progress(), '9');
  assert.equal((await api(`/api/lines/${back.line}`)).questions.find((q) => q.id === back.id).status, 'validated');
  await soon(async () => (await focused(d)) === back.id, 'the focus on the reopened question');
  const backOptions = order.find((c) => c.id === back.id).options;
  const backFirst = given[back.id];
  given[back.id] = backOptions.find((o) => o !== backFirst);
  await press([String(backOptions.indexOf(given[back.id]) + 1)], null);
  await soon(async () => (await progress()) === '10', 'answered again');
  // The last one with options is changed.
  const target = [...now].reverse().find((c) => given[c.id] !== FREE && c.id !== back.id);
  // Its options as they were shown while it was open (an answered card shows the answer).
  const options = order.find((c) => c.id === target.id).options;
  const other = options.find((o) => o !== given[target.id]);
  const first = given[target.id];
  await walkTo(await cards(d), target.id);
  await press(['c'], null);
  await soon(() => d.script("return !!document.activeElement.querySelector('[data-testid=answer-keep]');"), 'the change begun');
  await press([String(options.indexOf(other) + 1)], null);
  await soon(
    async () => (await cards(d)).find((c) => c.id === target.id)?.answer === `Ответ: ${other}`,
    'the changed answer shown',
  );
  given[target.id] = other;
  const daemonSays = (await api(`/api/lines/${target.line}`)).questions.find((q) => q.id === target.id);
  assert.equal(daemonSays.answer, other);

  // `?` shows the keys; Esc closes them.
  await press(['?'], null);
  await soon(() => d.script("return !!document.querySelector('[data-testid=keys-help]');"), 'the keys shown');
  await screenshot(d, 'morning-keys');
  await press([Key.ESCAPE], target.id, 'the keys closed, the focus back');

  // The fourth line goes on; the answer steps follow it into the slot. Wait for each line's
  // answers to reach its session.
  await mock.release(held.session);
  const texts = Object.fromEntries(order.map((c) => [c.id, c.text]));
  const lineOf = Object.fromEntries(order.map((c) => [c.id, c.line]));
  const carried = async () => {
    const answers = (await mock.log()).filter((e) => e.step_kind === 'answer');
    const missing = Object.keys(given).filter(
      (id) => !answers.some((e) => e.line === lineOf[id] && e.conversation.includes(`- Q: ${texts[id]}\n  A: ${given[id]}\n`)),
    );
    return missing.length === 0 ? answers : null;
  };
  const answers = await d.until(carried, 'every answer in its line’s answer step', 180000).catch(async (e) => {
    throw new Error(`${e.message}\n${await night()}\ngiven: ${JSON.stringify(given)}`);
  });
  // Each line's answers reached its own session, and the first answer of the changed one
  // never did.
  for (const [title, id] of Object.entries(lineIds)) {
    const sessions = new Set(answers.filter((e) => e.line === id).map((e) => e.session));
    const line = await api(`/api/lines/${id}`);
    assert.deepEqual([...sessions], [line.session_id], `${title}: the answers went to the line's session`);
  }
  for (const [id, was] of [
    [target.id, first],
    [back.id, backFirst],
  ]) {
    assert.ok(
      !answers.some((e) => e.conversation.includes(`- Q: ${texts[id]}\n  A: ${was}\n`)),
      `the mock never saw the first answer "${was}" of "${texts[id]}"`,
    );
  }

  // Carried: the page says so of every answer (the events refresh it).
  await soon(
    async () => (await cards(d)).every((c) => c.changeable === 'false'),
    'every answer shown as taken by its line',
    30000,
  );
  assert.ok(await d.script("return document.querySelectorAll('[data-testid=question-fixed]').length === 10;"));

  // A line merged after its answers: `a` on its question accepts it.
  const ready = await d.until(async () => {
    for (const id of Object.values(lineIds)) if ((await api(`/api/lines/${id}`)).state === 'awaiting_acceptance') return id;
    return null;
  }, 'a line awaiting acceptance', 180000);
  const list = await cards(d);
  await walkTo(list, list.find((c) => c.line === ready).id);
  await soon(() => d.script("return !!document.activeElement.querySelector('[data-testid=question-line-ready]');"), 'the card says its line awaits acceptance');
  await press(['a'], null);
  await d.until(async () => (await api(`/api/lines/${ready}`)).state === 'accepted', 'the line accepted by a');

  // `o` opens a remaining question's line on the Lines page.
  const rest = await soon(async () => {
    const c = await cards(d);
    return c.length > 0 && c.every((x) => x.line !== ready) ? c : null;
  }, "the accepted line's questions gone");
  // The focused question left with its line: the first one on the list has the focus now.
  const on = await soon(async () => {
    const f = await focused(d);
    return rest.some((c) => c.id === f) ? f : null;
  }, 'a remaining question focused');
  const lineToOpen = rest.find((c) => c.id === on).line;
  await press(['o'], null);
  await d.waitFor(`[data-testid=line-detail][data-line-id="${lineToOpen}"]`);
  assert.ok(await d.script(`return document.querySelector('[data-testid=line-row][data-line-id="${lineToOpen}"]').classList.contains('selected');`));
  await screenshot(d, 'morning-line-opened');
});

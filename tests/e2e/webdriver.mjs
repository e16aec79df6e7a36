// A small W3C WebDriver client over fetch, enough to drive the real app through
// tauri-driver: sessions, elements, clicks, typing, text, script, screenshots. No npm
// dependency, nothing that could try to download a browser or a driver.

/** WebDriver's codes for keys that are not characters. */
export const Key = {
  ENTER: '\uE007',
  ESCAPE: '\uE00C',
  SHIFT: '\uE008',
  ALT: '\uE00A',
  ARROW_UP: '\uE013',
  ARROW_DOWN: '\uE015',
};

/**
 * How long a wait for the page lasts unless a test says otherwise: what a page does in well
 * under a second on an idle machine (a render, a reload of a list, a daemon's answer) takes
 * seconds on a 2-core machine whose cores another build keeps busy. Waits for agents' work
 * (a line's steps, each a `claude` process) give their own, longer limits.
 */
export const WAIT_MS = 30000;

// The W3C element key; WebKitWebDriver 2.50 answers with a key ending in "cecf" instead, so
// an element reference is read as the single value of its object.
const elementId = (ref) => Object.values(ref)[0];

export class WebDriver {
  constructor(base, sessionId) {
    this.base = base;
    this.sessionId = sessionId;
  }

  static async connect(base, capabilities) {
    const res = await request(`${base}/session`, 'POST', { capabilities: { alwaysMatch: capabilities } });
    return new WebDriver(base, res.sessionId);
  }

  url(path) {
    return `${this.base}/session/${this.sessionId}${path}`;
  }

  async find(css) {
    const v = await request(this.url('/element'), 'POST', { using: 'css selector', value: css });
    return elementId(v);
  }

  async findAll(css) {
    const v = await request(this.url('/elements'), 'POST', { using: 'css selector', value: css });
    return v.map(elementId);
  }

  async click(css) {
    await this.act(css, 'click', {});
  }

  async type(css, text) {
    await this.act(css, 'value', { text });
  }

  /**
   * Waits for an element matching `css` that is enabled and sends it `action`. A click on a
   * disabled button is no error in WebDriver: it does nothing, and the test would then wait
   * for an outcome that never comes (a form whose button enables only once the app has
   * loaded what it needs, later on a loaded machine). A page that re-renders between the find
   * and the action (a live list whose row moved to another group) leaves a stale element:
   * nothing was done, so it is found again and the action repeated.
   */
  async act(css, action, body, timeoutMs = WAIT_MS) {
    await this.until(async () => {
      const [id] = await this.findAll(css);
      if (!id) return false;
      try {
        if (!(await request(this.url(`/element/${id}/enabled`), 'GET'))) return false;
        await request(this.url(`/element/${id}/${action}`), 'POST', body);
        return true;
      } catch (e) {
        if (/stale element/i.test(e.message)) return false;
        throw e;
      }
    }, `${action} on ${css}`, timeoutMs);
  }

  /**
   * Presses keys where the focus is, as a keyboard does (W3C key actions: a keydown and a
   * keyup each, no click, no element targeted). Each argument is a character, a `Key`, or an
   * array pressed together (`[Key.SHIFT, '/']`). A string of several characters is typed one
   * by one.
   */
  async keys(...presses) {
    const actions = [];
    for (const p of presses) {
      const chords = Array.isArray(p) ? [p] : [...p].map((c) => [c]);
      for (const chord of chords) {
        for (const c of chord) actions.push({ type: 'keyDown', value: c });
        for (const c of [...chord].reverse()) actions.push({ type: 'keyUp', value: c });
      }
    }
    await request(this.url('/actions'), 'POST', { actions: [{ type: 'key', id: 'keyboard', actions }] });
  }

  /**
   * A mouse drag as a hand does it (W3C pointer actions): the pointer to `from`, pressed, moved
   * to `to` in `steps` moves, released. Points are `{x, y}` in the viewport's CSS pixels. In
   * parts, to look at the page mid-drag: `press`, `moveTo`, `release` (the button stays down
   * between the calls).
   */
  async drag(from, to, steps = 5) {
    await this.press(from);
    await this.moveTo(from, to, steps);
    await this.release();
  }

  async press(at) {
    await this.pointer([pointerAt(at, 0), { type: 'pointerDown', button: 0 }, { type: 'pause', duration: 50 }]);
  }

  async moveTo(from, to, steps = 5) {
    const moves = [];
    for (let i = 1; i <= steps; i++) {
      moves.push(pointerAt({ x: from.x + ((to.x - from.x) * i) / steps, y: from.y + ((to.y - from.y) * i) / steps }));
    }
    await this.pointer([...moves, { type: 'pause', duration: 50 }]);
  }

  async release() {
    await this.pointer([{ type: 'pointerUp', button: 0 }]);
    await request(this.url('/actions'), 'DELETE');
  }

  async pointer(actions) {
    await request(this.url('/actions'), 'POST', {
      actions: [{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions }],
    });
  }

  async text(css) {
    const id = await this.find(css);
    return request(this.url(`/element/${id}/text`), 'GET');
  }

  async texts(css) {
    const ids = await this.findAll(css);
    return Promise.all(ids.map((id) => request(this.url(`/element/${id}/text`), 'GET')));
  }

  async script(body, args = []) {
    return request(this.url('/execute/sync'), 'POST', { script: body, args });
  }

  /** Runs `body` in the page with `args` and a callback last; resolves to what it is called with
   * (the driver's script timeout bounds it). */
  async scriptAsync(body, args = []) {
    return request(this.url('/execute/async'), 'POST', { script: body, args });
  }

  async screenshot() {
    return Buffer.from(await request(this.url('/screenshot'), 'GET'), 'base64');
  }

  /** Waits until an element matching `css` exists; returns its id. */
  async waitFor(css, timeoutMs = WAIT_MS) {
    return this.until(async () => {
      const ids = await this.findAll(css);
      return ids[0];
    }, `element ${css}`, timeoutMs);
  }

  /** Polls `probe` every `everyMs` until it returns something truthy, or fails after `timeoutMs`. */
  async until(probe, what, timeoutMs = WAIT_MS, everyMs = 100) {
    const deadline = Date.now() + timeoutMs;
    let last;
    for (;;) {
      try {
        const v = await probe();
        if (v) return v;
        last = v;
      } catch (e) {
        last = e;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  async quit() {
    await request(this.url(''), 'DELETE').catch(() => {});
  }
}

/** A pointer move to a point of the viewport (CSS pixels). */
function pointerAt(p, duration = 50) {
  return { type: 'pointerMove', duration, origin: 'viewport', x: Math.round(p.x), y: Math.round(p.y) };
}

async function request(url, method, body) {
  const res = await fetch(url, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok || (json.value && json.value.error)) {
    const v = json.value ?? {};
    throw new Error(`${method} ${url}: ${res.status} ${v.error ?? ''} ${v.message ?? ''}`);
  }
  return json.value;
}

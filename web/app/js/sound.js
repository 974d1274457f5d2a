// The alarm tone. Browsers let a page start audio only after the user has touched it, so one
// AudioContext is made and resumed at the first tap or key press anywhere in the app; a fire that
// comes later rings at once. If nothing was touched yet, the firing screen offers a sound button.
let ctx = null;

function context() {
  if (!ctx) {
    const Ctor = window.AudioContext || window.webkitAudioContext;
    if (!Ctor) return null;
    ctx = new Ctor();
  }
  return ctx;
}

/** Resumes audio inside a user gesture; answers whether sound can play now. */
export async function unlock() {
  const c = context();
  if (!c) return false;
  if (c.state !== "running") { try { await c.resume(); } catch { return false; } }
  return c.state === "running";
}

/** Whether a tone would be heard now (false until the user has touched the page). */
export function audible() { return ctx?.state === "running"; }

for (const type of ["pointerdown", "keydown"]) {
  window.addEventListener(type, () => { unlock(); }, { capture: true, passive: true });
}

/** Starts a beep every second; returns the function that stops it. */
export function ring() {
  const c = context();
  if (!c) return () => {};
  const beep = () => {
    if (c.state !== "running") return;
    const o = c.createOscillator(), g = c.createGain();
    o.frequency.value = 880; o.connect(g); g.connect(c.destination);
    g.gain.setValueAtTime(0.0001, c.currentTime);
    g.gain.exponentialRampToValueAtTime(0.3, c.currentTime + 0.02);
    g.gain.exponentialRampToValueAtTime(0.0001, c.currentTime + 0.45);
    o.start(); o.stop(c.currentTime + 0.5);
  };
  beep();
  const timer = setInterval(beep, 1000);
  return () => clearInterval(timer);
}

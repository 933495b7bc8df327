// speedscope_test.mjs - open a stackfold output (pprof .pb.gz or folded
// text) in speedscope, the way a user does (its Browse button), in
// Debian's chromium, headless, for tests/t91-ux-scripts.sh.
//
//   node speedscope_test.mjs CHECKS.json
//
// CHECKS.json: {"npm": dir holding node_modules (playwright-core,
//   speedscope), "runs": [{"file": profile path, "label": name for the
//   lines, "want": [{"name": function, "pct": self share in percent}...],
//   "shot": png path}...]}: one browser, a fresh page for each run
// Checks that speedscope imports the file (its title becomes
// "FILE - speedscope", no error shown), then reads its Sandwich view's
// table (a DOM table: function, total, self) and compares each wanted
// function's self share, as a fraction of all self time, with "pct"
// (within 0.2 percentage points).  Prints PASS:/FAIL: lines (tests/lib.sh
// format); exit 1 when anything failed.  No network: every request but
// file: is refused and counted.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const require = createRequire(path.join(cfg.npm, 'node_modules', 'x.js'));
const { chromium } = require('playwright-core');
const index = path.join(cfg.npm, 'node_modules', 'speedscope', 'dist', 'release', 'index.html');
let label = '';
let failed = 0;
const pass = (n) => console.log(`PASS: ${label}: ${n}`);
function fail(n, ...why) {
	failed++;
	console.log(`FAIL: ${label}: ${n}`);
	for (const w of why) console.log(`    ${w}`);
}

// "474.75ms (70%)", "1.2s", "12", "3.4K": the number, in one unit per column
function amount(s) {
	const m = /^([0-9.]+)\s*(ns|µs|us|ms|s|K|M)?/.exec(s.trim());
	if (!m) return NaN;
	const k = { ns: 1e-9, 'µs': 1e-6, us: 1e-6, ms: 1e-3, s: 1, K: 1e3, M: 1e6 }[m[2]] || 1;
	return parseFloat(m[1]) * k;
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stackfold-speedscope-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	viewport: { width: 1200, height: 800 },
});
// one run: import the file, read the Sandwich view, compare the shares
async function run(r) {
	label = r.label || path.basename(r.file);
	const errors = [];
	const requests = [];
	const page = await ctx.newPage();
	try {
		page.on('pageerror', (e) => errors.push(String(e)));
		await page.route((u) => !u.href.startsWith('file:'), (q) => { requests.push(q.request().url()); q.abort(); });
		await page.goto('file://' + index);
		await page.setInputFiles('input[type=file]', r.file);
		const want = `${path.basename(r.file)} - speedscope`;
		// speedscope says a failed import in an alert: that ends the wait
		let alerted = '';
		const alert = new Promise((res) => page.once('dialog', (d) => {
			alerted = d.message();
			d.dismiss().catch(() => {});
			res();
		}));
		try {
			await Promise.race([alert, page.waitForFunction((t) => document.title === t, want, { timeout: 15000 })]);
			if (alerted) throw new Error(alerted);
			pass(`speedscope imported it (title '${want}')`);
		} catch (e) {
			const body = (await page.evaluate(() => document.body.innerText)).slice(0, 200).replace(/\s+/g, ' ');
			fail('speedscope imported it', `title: '${await page.title()}'`, `said: ${String(e.message || e).slice(0, 200)}`, `page: ${body}`);
			return;
		}
		await page.keyboard.press('3');	// the Sandwich view: a table of functions
		await page.waitForFunction(() => /Symbol Name/.test(document.body.innerText), null, { timeout: 10000 });
		const rows = await page.evaluate(() => {
			const t = document.body.innerText.split('\n').map((s) => s.trim()).filter((s) => s);
			const i = t.findIndex((s) => /Symbol Name/.test(s));
			return t.slice(i + 1);
		});
		// rows come in threes: total, self, name
		const self = new Map();
		let sum = 0;
		for (let i = 0; i + 2 < rows.length; i += 3) {
			const v = amount(rows[i + 1]);
			if (Number.isNaN(v)) break;
			self.set(rows[i + 2], (self.get(rows[i + 2]) || 0) + v);
			sum += v;
		}
		if (self.size > 0 && sum > 0) pass(`Sandwich table read (${self.size} functions)`);
		else fail('Sandwich table read', `rows: ${rows.slice(0, 9).join(' | ')}`);
		for (const w of r.want) {
			const got = 100 * (self.get(w.name) || 0) / sum;
			if (Math.abs(got - w.pct) <= 0.2) pass(`${w.name}: self ${got.toFixed(2)}% as in the folded text`);
			else fail(`${w.name}: self share`, `expected: ${w.pct.toFixed(2)}%`, `speedscope: ${got.toFixed(2)}%`);
		}
		if (r.shot) {
			fs.mkdirSync(path.dirname(r.shot), { recursive: true });
			await page.screenshot({ path: r.shot });
		}
		if (errors.length === 0) pass('no script errors');
		else fail('no script errors', errors.join(' | '));
	} catch (e) {
		fail('browser session', String(e && e.stack || e));
	} finally {
		if (requests.length) fail('no network requests', requests.join(' '));
		await page.close();
	}
}

try {
	for (const r of cfg.runs) await run(r);
} finally {
	await ctx.close();
	fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

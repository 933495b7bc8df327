// svg_test.mjs - drive a stackfold SVG flame graph in Debian's chromium the
// way a user would, for tests/t61-svg-browser.sh.
//
//   node svg_test.mjs CHECKS.json
//
// CHECKS.json: {"svg": path, "shot": png path, "width": 1200,
//   "search": [{"term": re, "pct": "52.00"}...],   via the Search button
//   "ctrlf": {"term": re, "pct": "48.00"},          via Ctrl-F
//   "hover": name, "zoom": name, "hidden": name, "bookmark": {...}}
// Prints one "PASS: ..." / "FAIL: ..." line per check (tests/lib.sh format)
// and exits 1 when anything failed.  Never downloads a browser.  Also checks
// that a zoom is kept in the URL and the bookmarked URL reopens zoomed.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let failed = 0;
function pass(name) { console.log(`PASS: ${name}`); }
function fail(name, ...why) {
	failed++;
	console.log(`FAIL: ${name}`);
	for (const w of why) console.log(`    ${w}`);
}
function checkEq(name, want, got) {
	if (want === got) pass(name);
	else fail(name, `expected: ${want}`, `actual:   ${got}`);
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stackfold-chromium-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update',
		'--disable-sync'],
	viewport: { width: cfg.width + 20, height: 700 },
});
const errors = [];
const requests = [];
try {
	const page = await ctx.newPage();
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	const url = 'file://' + path.resolve(cfg.svg);
	await page.goto(url);
	await page.waitForFunction(() => window.stackfold && window.stackfold.frames.length > 0,
		null, { timeout: 10000 });
	pass('script initialised');
	// the whole graph in the screenshots (fullPage hangs on SVG documents)
	const h = parseInt(await page.evaluate(() => document.documentElement.getAttribute('height')), 10);
	await page.setViewportSize({ width: cfg.width + 20, height: Math.min(h + 20, 4000) });

	// a frame by its function name (first in document order), found
	// through the page's own frame table: a text filter over tens of
	// thousands of <g>s is too slow
	const frame = async (name) => {
		const i = await page.evaluate((n) =>
			window.stackfold.frames.findIndex((f) => f.name === n), name);
		if (i < 0) throw new Error(`no frame named '${name}'`);
		return page.locator('#frames > g').nth(i);
	};
	const rectAttr = async (name, a) => (await frame(name)).locator('rect').getAttribute(a);

	// hover shows "Function: name (N samples, P%)"
	if (cfg.hover) {
		await (await frame(cfg.hover)).locator('rect').hover();
		const det = await page.textContent('#details');
		if (det.startsWith(`Function: ${cfg.hover} (`) && / samples, [0-9.]+%\)$/.test(det))
			pass(`hover shows details (${det})`);
		else fail('hover shows details', `got: ${det}`);
	}

	// search through the button and the prompt, as a user does
	for (const s of cfg.search) {
		page.once('dialog', (d) => d.accept(s.term));
		await page.click('#search');
		checkEq(`search button '${s.term}': matched share`, `Matched: ${s.pct}%`,
			(await page.textContent('#matched')).trim());
	}
	const hl = await page.$$eval('#frames rect', (rs) =>
		rs.filter((r) => r.getAttribute('fill') === 'rgb(230,0,230)').length);
	if (hl > 0) pass(`matches highlighted (${hl} frames)`);
	else fail('matches highlighted', 'no magenta frame');

	// Ctrl-F opens the same prompt
	if (cfg.ctrlf) {
		page.once('dialog', (d) => d.accept(cfg.ctrlf.term));
		await page.keyboard.press('Control+f');
		checkEq(`Ctrl-F '${cfg.ctrlf.term}': matched share`, `Matched: ${cfg.ctrlf.pct}%`,
			(await page.textContent('#matched')).trim());
	}

	// click zooms: the frame becomes the full width, others outside hide
	if (cfg.zoom) {
	const full = (cfg.width - 20).toFixed(2);
	const before = await rectAttr(cfg.zoom, 'width');
	await (await frame(cfg.zoom)).locator('rect').click();
	checkEq(`click '${cfg.zoom}': full width`, full, await rectAttr(cfg.zoom, 'width'));
	const hid = await (await frame(cfg.hidden)).evaluate((g) => g.style.display);
	checkEq(`click '${cfg.zoom}': '${cfg.hidden}' hidden`, 'none', hid);
	const unz = await page.$eval('#unzoom', (e) => e.classList.contains('hide'));
	checkEq('Reset Zoom shown while zoomed', false, unz);
	const zurl = page.url();
	checkEq('zoom kept in the URL (?x=&y=)', true, /\?x=[0-9.]+&y=[0-9]+/.test(zurl));
	fs.mkdirSync(path.dirname(cfg.shot), { recursive: true });
	await page.screenshot({ path: cfg.shot.replace(/\.png$/, '-zoomed.png') });

	// Reset Zoom restores the original geometry
	await page.click('#unzoom');
	checkEq(`Reset Zoom: '${cfg.zoom}' back to ${before}`, before, await rectAttr(cfg.zoom, 'width'));
	const shown = await (await frame(cfg.hidden)).evaluate((g) => g.style.display);
	checkEq(`Reset Zoom: '${cfg.hidden}' shown again`, '', shown);

	// opening the bookmarked URL zooms to the same frame
	await page.goto(zurl);
	await page.waitForFunction(() => window.stackfold, null, { timeout: 10000 });
	checkEq(`bookmarked zoom reopens on '${cfg.zoom}'`, full, await rectAttr(cfg.zoom, 'width'));
	await page.click('#unzoom');
	}

	// the view is bookmarkable: ?s= search restored on load
	if (cfg.bookmark) {
		await page.goto(url + '?s=' + encodeURIComponent(cfg.bookmark.term));
		await page.waitForFunction(() => window.stackfold, null, { timeout: 10000 });
		checkEq(`?s=${cfg.bookmark.term} restores the search`, `Matched: ${cfg.bookmark.pct}%`,
			(await page.textContent('#matched')).trim());
		page.once('dialog', (d) => d.accept(cfg.search[0].term));
		await page.click('#search');
	}
	await page.screenshot({ path: cfg.shot });
	pass(`screenshot saved (${cfg.shot})`);

	checkEq('no script errors', '', errors.join(' | '));
	checkEq('no network requests', '', requests.join(' '));
} catch (e) {
	fail('browser session', String(e && e.stack || e));
} finally {
	await ctx.close();
	fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

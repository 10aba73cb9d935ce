// An outside MCP client walks Foundry's OAuth by its URL alone, with the
// TypeScript SDK's own client-side OAuth (what the MCP Inspector and Claude
// Code use): the discovery chain from a 401, dynamic registration, sign-in
// and consent on the real forms, the code exchange with PKCE, tool calls,
// refresh rotation with reuse detection, and the refusals an outside client
// can meet. Every check prints PASS or FAIL with what came back; the exit
// status is 1 if any failed.
//
// Run by .ci/oauth-check, which starts the server. Environment:
//   FOUNDRY_URL       the server's base URL, e.g. http://127.0.0.1:8080
//   FOUNDRY_EMAIL     the owner's email, FOUNDRY_PASSWORD their password
//   FOUNDRY_BIN       the foundry binary, FOUNDRY_DATA its --data folder
//                     (for `foundry connections list|revoke`)
//   FOUNDRY_REFRESH_GRACE_MS  the server's refresh grace period (10000)

import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const need = name => {
  const v = process.env[name];
  if (!v) {
    console.error(`oauth-check: set ${name} (see the head of this script)`);
    process.exit(2);
  }
  return v;
};
const base = need('FOUNDRY_URL').replace(/\/+$/, '');
const email = need('FOUNDRY_EMAIL');
const password = need('FOUNDRY_PASSWORD');
const bin = need('FOUNDRY_BIN');
const data = need('FOUNDRY_DATA');
const graceMs = Number(process.env.FOUNDRY_REFRESH_GRACE_MS || 10000);

const origin = new URL(base).origin;
const mcpURL = `${base}/mcp`;
const inspectorOrigin = 'http://localhost:6274';
const callback = `${inspectorOrigin}/oauth/callback`;
const protocolVersion = '2025-11-25';

// Every request of this script is bounded in time.
const fetchT = (url, init = {}) => fetch(url, { signal: AbortSignal.timeout(15000), ...init });

let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  return ok;
}
// section runs one part; an exception in it is one failure, and the run
// goes on with the next part.
async function section(title, fn) {
  console.log(`== ${title}`);
  try {
    return await fn();
  } catch (e) {
    check(`${title}: ran to the end`, false, e?.stack || String(e));
    return undefined;
  }
}
const short = (s, n = 300) => {
  s = String(s ?? '').replace(/\s+/g, ' ').trim();
  return s.length > n ? `${s.slice(0, n)}…` : s;
};
const sleep = ms => new Promise(r => setTimeout(r, ms));

// ---- PKCE and tokens ------------------------------------------------------

const b64url = buf => Buffer.from(buf).toString('base64url');
function pkce() {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
}

async function tokenRequest(params) {
  const res = await fetchT(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params),
  });
  const text = await res.text();
  let json = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

// mcpCall is one JSON-RPC request to /mcp with (or without) a bearer token.
async function mcpCall(method, params, token) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': protocolVersion,
  };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetchT(mcpURL, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    // An SSE answer: the last data line is the response.
    const line = text.split('\n').filter(l => l.startsWith('data:')).pop();
    try {
      json = line ? JSON.parse(line.slice(5)) : undefined;
    } catch {}
  }
  return { status: res.status, challenge: res.headers.get('www-authenticate') || '', json, text };
}
const callList = token => mcpCall('tools/call', { name: 'list_notes', arguments: {} }, token);

// ---- a person at a browser -------------------------------------------------

const entities = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function unescapeHTML(s) {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return entities[e.toLowerCase()] ?? m;
  });
}
function attrs(tag) {
  const out = {};
  for (const m of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
    out[m[1].toLowerCase()] = unescapeHTML(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}
// forms lists the page's forms: action, method and inputs.
function forms(html) {
  const out = [];
  for (const f of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const a = attrs(f[1]);
    const inputs = [...f[2].matchAll(/<input\b([^>]*)>/gi)].map(m => attrs(m[1]));
    out.push({ action: a.action || '', method: (a.method || 'get').toLowerCase(), inputs, html: f[2] });
  }
  return out;
}

class Browser {
  jar = new Map();
  async go(url, { method = 'GET', form } = {}) {
    const u = new URL(url, base);
    const headers = new Headers({ accept: 'text/html' });
    if (u.origin === origin && this.jar.size) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    let body;
    if (form) {
      body = new URLSearchParams(form);
      headers.set('content-type', 'application/x-www-form-urlencoded');
      headers.set('origin', origin); // a browser sends its page's origin with a form post
    }
    const res = await fetchT(u, { method, headers, body, redirect: 'manual' });
    if (u.origin === origin) {
      for (const sc of res.headers.getSetCookie()) {
        const [pair, ...opts] = sc.split(';');
        const i = pair.indexOf('=');
        const name = pair.slice(0, i).trim();
        const value = pair.slice(i + 1).trim();
        if (value === '' || opts.some(o => /^\s*max-age\s*=\s*(0|-)/i.test(o))) this.jar.delete(name);
        else this.jar.set(name, value);
      }
    }
    const loc = res.headers.get('location');
    return { status: res.status, url: u.href, location: loc ? new URL(loc, u).href : '', type: res.headers.get('content-type') || '', body: await res.text() };
  }
}

// consent answers the consent page p: its hidden fields (the authorization
// request and the CSRF token), the scopes ticked (or scopes, when given),
// the radios as checked, and the decision.
function consentForm(p, scopes) {
  const f = forms(p.body).find(f => f.inputs.some(i => i.name === 'consent_scope'));
  if (!f) throw new Error(`no consent form on the page (${p.status} ${p.url}): ${short(p.body)}`);
  const pairs = [];
  for (const i of f.inputs) {
    const type = (i.type || 'text').toLowerCase();
    if (type === 'hidden') pairs.push([i.name, i.value]);
    else if (type === 'radio' && 'checked' in i) pairs.push([i.name, i.value]);
    else if (type === 'checkbox' && i.name === 'consent_scope' && (scopes ? scopes.includes(i.value) : 'checked' in i)) pairs.push([i.name, i.value]);
    else if (type === 'checkbox' && i.name !== 'consent_scope' && 'checked' in i) pairs.push([i.name, i.value]);
  }
  pairs.push(['consent_decision', 'approve']);
  return { action: f.action || '/authorize', pairs, csrf: f.inputs.find(i => i.name === 'csrf_token')?.value };
}

// person plays the person who opens the authorization URL: signs in on the
// real form when asked, consents on the real form, and returns where the
// browser is sent back to the client. checks: whether to check each step
// (the first walk through).
async function person(browser, authURL, { scopes, checks = false } = {}) {
  let p = await browser.go(authURL);
  if ((p.status === 302 || p.status === 303) && new URL(p.location).pathname === '/signin') {
    const signin = await browser.go(p.location);
    const f = forms(signin.body).find(f => f.inputs.some(i => i.name === 'password'));
    const csrf = f?.inputs.find(i => i.name === 'csrf_token')?.value;
    const next = f?.inputs.find(i => i.name === 'next')?.value;
    if (checks) {
      check('sign-in: /authorize sends a person who is not signed in to /signin', true, `${p.status} → ${short(p.location, 120)}`);
      check('sign-in: the page has a form with hidden csrf_token and next', signin.status === 200 && !!csrf && !!next, `${signin.status}, csrf_token ${csrf ? 'present' : 'missing'}, next=${short(next, 80)}`);
      check('sign-in: the foundry_csrf cookie matches the form token', browser.jar.get('foundry_csrf') === csrf, `cookie ${browser.jar.has('foundry_csrf') ? 'set' : 'missing'}`);
    }
    if (!f || !csrf) throw new Error(`no sign-in form: ${signin.status} ${short(signin.body)}`);
    const done = await browser.go(f.action || '/signin', { method: 'POST', form: [['csrf_token', csrf], ['next', next ?? ''], ['email', email], ['password', password]] });
    if (checks) {
      check('sign-in: the form signs in and goes back to /authorize', (done.status === 302 || done.status === 303) && done.location.includes('/authorize?'), `${done.status} → ${short(done.location || done.body, 120)}`);
      check('sign-in: a session cookie is set', browser.jar.has('foundry_session'), [...browser.jar.keys()].join(', '));
    }
    if (!done.location) throw new Error(`sign-in did not redirect: ${done.status} ${short(done.body)}`);
    p = await browser.go(done.location);
  }
  if (p.status !== 200 || !p.body.includes('consent_decision')) throw new Error(`expected the consent page, got ${p.status} ${p.location || short(p.body)}`);
  const c = consentForm(p, scopes);
  const done = await browser.go(c.action, { method: 'POST', form: c.pairs });
  if (!done.location) throw new Error(`consent did not redirect to the client: ${done.status} ${short(done.body)}`);
  const back = new URL(done.location);
  return { page: p, consent: c, status: done.status, location: done.location, back, code: back.searchParams.get('code'), state: back.searchParams.get('state'), iss: back.searchParams.get('iss'), error: back.searchParams.get('error') };
}

// ---- the SDK's OAuth client provider, in memory ----------------------------

class MemoryProvider {
  // consents: the scopes the person ticks on each consent page in turn
  // (undefined: the page's defaults); pages: the consent pages seen.
  constructor(browser, { name = 'MCP Inspector', consents = [] } = {}) {
    this.browser = browser;
    this.name = name;
    this.consents = consents;
    this.saved = [];
    this.pages = [];
  }
  get redirectUrl() {
    return callback;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this._state = b64url(randomBytes(16));
    return this._state;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(c) {
    this._client = c;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(t) {
    this._tokens = t;
    this.saved.push(t);
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    if (!this._verifier) throw new Error('no code verifier saved');
    return this._verifier;
  }
  async redirectToAuthorization(url) {
    this.authURL = new URL(url);
    const first = this.pages.length === 0 && this.name === 'MCP Inspector';
    this.result = await person(this.browser, url, { checks: first, scopes: this.consents[this.pages.length] });
    this.pages.push(this.result.page.body);
  }
}

// connectUnsigned connects with a provider that holds no token yet: the
// initialize's 401 sends the SDK through OAuth (the person signs in and
// consents in redirectToAuthorization), and connect throws; it answers the
// transport, for finishAuth, and what connect threw.
async function connectUnsigned(p) {
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: p });
  const client = new Client({ name: 'foundry-oauth-check', version: '1.0.0' });
  let err;
  try {
    await client.connect(transport);
  } catch (e) {
    err = e;
  }
  await client.close();
  return { transport, err };
}

// ---- the checks ------------------------------------------------------------

const browser = new Browser();
let asMeta;
let client1; // the SDK-registered client
let tokens; // its tokens
let noteId;

await section('discovery, as the Inspector walks it', async () => {
  const r = await callList();
  const m = /resource_metadata="([^"]+)"/.exec(r.challenge);
  check('POST /mcp tools/call without a token: 401 naming resource_metadata', r.status === 401 && !!m, `${r.status} WWW-Authenticate: ${r.challenge}`);
  const prmURL = m ? m[1] : `${base}/.well-known/oauth-protected-resource/mcp`;

  const prmRes = await fetchT(prmURL, { headers: { origin: inspectorOrigin } });
  const prm = await prmRes.json().catch(() => ({}));
  check('RFC 9728 metadata: application/json', prmRes.ok && (prmRes.headers.get('content-type') || '').startsWith('application/json'), `${prmRes.status} ${prmRes.headers.get('content-type')}`);
  check('RFC 9728 metadata: resource is the /mcp URL', prm.resource === mcpURL, `resource=${prm.resource}`);
  check('RFC 9728 metadata: authorization_servers names this server', Array.isArray(prm.authorization_servers) && prm.authorization_servers.includes(base), `authorization_servers=${JSON.stringify(prm.authorization_servers)}`);
  check('RFC 9728 metadata: CORS for the Inspector page', prmRes.headers.get('access-control-allow-origin') === '*' || prmRes.headers.get('access-control-allow-origin') === inspectorOrigin, `Access-Control-Allow-Origin: ${prmRes.headers.get('access-control-allow-origin')}`);

  const as = prm.authorization_servers?.[0] || base;
  const asURL = `${as.replace(/\/+$/, '')}/.well-known/oauth-authorization-server`;
  const asRes = await fetchT(asURL, { headers: { origin: inspectorOrigin } });
  asMeta = await asRes.json().catch(() => ({}));
  check('RFC 8414 metadata: application/json', asRes.ok && (asRes.headers.get('content-type') || '').startsWith('application/json'), `${asRes.status} ${asRes.headers.get('content-type')}`);
  check('RFC 8414 metadata: issuer is the server', asMeta.issuer === as, `issuer=${asMeta.issuer}`);
  check('RFC 8414 metadata: code_challenge_methods_supported exactly ["S256"]', JSON.stringify(asMeta.code_challenge_methods_supported) === '["S256"]', JSON.stringify(asMeta.code_challenge_methods_supported));
  check('RFC 8414 metadata: authorization_response_iss_parameter_supported true', asMeta.authorization_response_iss_parameter_supported === true, String(asMeta.authorization_response_iss_parameter_supported));
  check('RFC 8414 metadata: client_id_metadata_document_supported true', asMeta.client_id_metadata_document_supported === true, String(asMeta.client_id_metadata_document_supported));
  check('RFC 8414 metadata: registration_endpoint', typeof asMeta.registration_endpoint === 'string' && asMeta.registration_endpoint.startsWith(base), String(asMeta.registration_endpoint));
  check('RFC 8414 metadata: "none" among token_endpoint_auth_methods_supported', (asMeta.token_endpoint_auth_methods_supported || []).includes('none'), JSON.stringify(asMeta.token_endpoint_auth_methods_supported));
  check('RFC 8414 metadata: CORS for the Inspector page', asRes.headers.get('access-control-allow-origin') === '*' || asRes.headers.get('access-control-allow-origin') === inspectorOrigin, `Access-Control-Allow-Origin: ${asRes.headers.get('access-control-allow-origin')}`);

  // The preflights the Inspector's browser page sends before registering
  // and exchanging the code, and the CORS headers on the answers.
  for (const [path, method, reqHeaders] of [
    [new URL(asURL).pathname, 'GET', 'mcp-protocol-version'],
    [new URL(prmURL).pathname, 'GET', 'mcp-protocol-version'],
    ['/register', 'POST', 'content-type'],
    ['/token', 'POST', 'content-type'],
  ]) {
    const pre = await fetchT(`${base}${path}`, {
      method: 'OPTIONS',
      headers: { origin: inspectorOrigin, 'access-control-request-method': method, 'access-control-request-headers': reqHeaders },
    });
    const allowOrigin = pre.headers.get('access-control-allow-origin');
    const allowMethods = (pre.headers.get('access-control-allow-methods') || '').toUpperCase();
    const allowHeaders = (pre.headers.get('access-control-allow-headers') || '').toLowerCase();
    check(`CORS preflight OPTIONS ${path}`, pre.status >= 200 && pre.status < 300 && (allowOrigin === '*' || allowOrigin === inspectorOrigin) && allowMethods.includes(method) && (allowHeaders === '*' || reqHeaders.split(',').every(h => allowHeaders.includes(h))),
      `${pre.status} Allow-Origin=${allowOrigin} Allow-Methods=${allowMethods} Allow-Headers=${allowHeaders}`);
  }
  // The answers themselves carry CORS too (an error answer included: the
  // page must be able to read why).
  const reg = await fetchT(`${base}/register`, { method: 'POST', headers: { origin: inspectorOrigin, 'content-type': 'application/json' }, body: '{}' });
  check('CORS on a POST /register answer', reg.headers.get('access-control-allow-origin') === '*' || reg.headers.get('access-control-allow-origin') === inspectorOrigin, `${reg.status} Access-Control-Allow-Origin: ${reg.headers.get('access-control-allow-origin')}`);
  await reg.body?.cancel();
  const tok = await fetchT(`${base}/token`, { method: 'POST', headers: { origin: inspectorOrigin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' });
  check('CORS on a POST /token answer', tok.headers.get('access-control-allow-origin') === '*' || tok.headers.get('access-control-allow-origin') === inspectorOrigin, `${tok.status} Access-Control-Allow-Origin: ${tok.headers.get('access-control-allow-origin')}`);
  await tok.body?.cancel();
});

const provider = new MemoryProvider(browser);
let anonymousTools;

await section("the TypeScript SDK's own OAuth (StreamableHTTPClientTransport + OAuthClientProvider)", async () => {
  const anon = await mcpCall('tools/list', {});
  anonymousTools = anon.json?.result?.tools?.map(t => t.name) ?? [];
  check('tools/list without a token answers the published tools', anon.status === 200 && anonymousTools.length > 0, `${anon.status}, ${anonymousTools.length} tools`);

  const init = await mcpCall('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'foundry-oauth-check', version: '1.0.0' } });
  check('initialize without a token: 401 naming resource_metadata (a session needs credentials)', init.status === 401 && /resource_metadata="[^"]+"/.test(init.challenge), `${init.status} WWW-Authenticate: ${init.challenge}`);

  let { transport, err } = await connectUnsigned(provider);
  let client;
  check('connecting sends the SDK through OAuth (UnauthorizedError once it has redirected)', err instanceof UnauthorizedError, err ? `${err.constructor.name}: ${short(err.message)}` : 'no error');
  client1 = provider.clientInformation();
  check('the SDK registered itself by RFC 7591 (a client_id, no secret)', !!client1?.client_id && !client1.client_secret, JSON.stringify({ client_id: client1?.client_id, token_endpoint_auth_method: client1?.token_endpoint_auth_method }));
  const au = provider.authURL;
  check('the SDK sent PKCE S256 and resource=the /mcp URL', !!au && au.searchParams.get('code_challenge_method') === 'S256' && !!au.searchParams.get('code_challenge') && au.searchParams.get('resource') === mcpURL,
    au ? `code_challenge_method=${au.searchParams.get('code_challenge_method')} resource=${au.searchParams.get('resource')} scope=${au.searchParams.get('scope')}` : 'no authorization URL');
  const r = provider.result;
  if (!r) throw new Error('redirectToAuthorization was not called');
  check('consent: the page names the client and its redirect host', r.page.body.includes('MCP Inspector') && r.page.body.includes('localhost:6274'), short(/<h1>[^<]*<\/h1>/.exec(r.page.body)?.[0]));
  check('consent: the form carries the session CSRF token', !!r.consent.csrf, r.consent.csrf ? 'csrf_token present' : 'missing');
  check('consent: the browser goes back to the callback with a code', (r.status === 302 || r.status === 303) && r.back.origin + r.back.pathname === callback && !!r.code && !r.error, `${r.status} → ${short(r.location, 160)}`);
  check('consent: the state comes back unchanged', r.state === provider._state, `state ${r.state === provider._state ? 'matches' : `${r.state} != ${provider._state}`}`);
  check('RFC 9207: iss in the authorization response is the issuer', r.iss === asMeta?.issuer, `iss=${r.iss}`);

  await transport.finishAuth(r.code);
  tokens = provider.tokens();
  check('finishAuth: the code and the PKCE verifier become access and refresh tokens', !!tokens?.access_token && !!tokens?.refresh_token && /^bearer$/i.test(tokens.token_type || ''),
    `token_type=${tokens?.token_type} expires_in=${tokens?.expires_in} scope=${tokens?.scope} refresh_token ${tokens?.refresh_token ? 'present' : 'missing'}`);

  // Connect again, as the SDK docs show after finishAuth.
  transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
  client = new Client({ name: 'foundry-oauth-check', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const names = tools.map(t => t.name);
    check('listTools with the token: the same tools as without one', names.length > 0 && JSON.stringify([...names].sort()) === JSON.stringify([...anonymousTools].sort()), `${names.length} tools with the token, ${anonymousTools.length} without${names.length === 17 ? '' : ' (17 expected by the brief)'}`);

    const list = await client.callTool({ name: 'list_notes', arguments: {} });
    const text = JSON.stringify(list.structuredContent ?? list.content);
    const notes = list.structuredContent?.notes ?? list.structuredContent?.items ?? [];
    noteId = (Array.isArray(notes) ? notes : []).find(n => n.title === 'Welcome')?.note_id;
    check('callTool list_notes lists the demo Note "Welcome"', !list.isError && text.includes('Welcome') && !!noteId, `${list.isError ? 'tool error ' : ''}${short(text, 200)}`);

    const tabs = await client.callTool({ name: 'list_note_tabs', arguments: { note_id: noteId } });
    const version = tabs.structuredContent?.version;
    check('callTool list_note_tabs on it answers its version', !tabs.isError && Number.isInteger(version), short(JSON.stringify(tabs.structuredContent ?? tabs.content), 160));
    const label = `By the TS SDK ${Date.now()}`;
    const made = await client.callTool({
      name: 'create_note_tab',
      arguments: { note_id: noteId, tab_type: 'sheet', label, expected_version: version, idempotency_key: `oauth-check-${b64url(randomBytes(6))}` },
    });
    const after = await client.callTool({ name: 'list_note_tabs', arguments: { note_id: noteId } });
    check('a write tool works (create_note_tab, then the tab is listed)', !made.isError && JSON.stringify(after.structuredContent ?? after.content).includes(label),
      `${made.isError ? 'tool error: ' : ''}${short(JSON.stringify(made.structuredContent ?? made.content), 200)}`);
  } finally {
    await client.close();
  }
});

let rotatedAt = 0;
let newTokens;
await section('refresh: rotation, then reuse detection', async () => {
  if (!tokens?.refresh_token || !client1) throw new Error('no refresh token from the SDK flow');
  const wrong = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client1.client_id, resource: `${base}/elsewhere` });
  check('refresh with a resource that is not the /mcp URL → invalid_target', wrong.status === 400 && wrong.json.error === 'invalid_target', `${wrong.status} ${short(wrong.text, 200)}`);
  const r = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client1.client_id });
  rotatedAt = Date.now();
  newTokens = r.json;
  check('refresh without resource: new access and refresh tokens', r.status === 200 && !!r.json.access_token && !!r.json.refresh_token && r.json.access_token !== tokens.access_token && r.json.refresh_token !== tokens.refresh_token,
    `${r.status} ${r.status === 200 ? `scope=${r.json.scope} expires_in=${r.json.expires_in}` : short(r.text)}`);
  const c = await callList(r.json.access_token);
  check('the refreshed access token works on /mcp (its audience kept)', c.status === 200 && !c.json?.result?.isError, `${c.status} ${short(c.challenge || c.text, 160)}`);
});

// The MCP authorization spec's step-up: a read-only grant asked for write
// gets a new consent, never a silent upgrade. This SDK (1.x) answers the
// 403 by refreshing without scope (typescript-sdk#2255; the 2.x client
// re-authorizes instead), so Foundry's part is that the refresh keeps the
// grant read-only; then the client authorizes again, as 2.x does.
await section('step-up: a read-only grant asked for write', async () => {
  const p = new MemoryProvider(browser, { name: 'oauth-check step-up', consents: [['osfoundry:read']] });
  let { transport, err: connectErr } = await connectUnsigned(p);
  if (connectErr && !(connectErr instanceof UnauthorizedError)) throw connectErr;
  let client;
  if (!p.result?.code) throw new Error('no authorization code for the step-up client');
  await transport.finishAuth(p.result.code);
  check('consent with read only → the SDK holds a read-only token', p.tokens()?.scope === 'osfoundry:read', `scope=${p.tokens()?.scope}`);

  transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: p });
  client = new Client({ name: 'foundry-oauth-check', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tabs = await client.callTool({ name: 'list_note_tabs', arguments: { note_id: noteId } });
    const write = () =>
      client.callTool({
        name: 'create_note_tab',
        arguments: { note_id: noteId, tab_type: 'sheet', label: 'By step-up', expected_version: tabs.structuredContent?.version, idempotency_key: 'oauth-check-step-up' },
      });
    let err;
    try {
      await write();
    } catch (e) {
      err = e;
    }
    check('write with the read-only token: the SDK meets 403 insufficient_scope, its refresh stays read-only', !!err && /403/.test(String(err.message)) && p.saved.length >= 2 && p.tokens()?.scope === 'osfoundry:read' && p.pages.length === 1,
      `${err ? `${err.constructor.name}: ${short(err.message, 120)}` : 'no error'}; tokens saved: ${p.saved.length}; scope after the SDK's refresh: ${p.tokens()?.scope}; consent pages: ${p.pages.length}`);

    // The client authorizes again (drops its tokens; 2.x bypasses the
    // refresh): a second consent, with write marked new.
    p._tokens = undefined;
    err = undefined;
    try {
      await write();
    } catch (e) {
      err = e;
    }
    check('authorizing again shows a second consent with the write scope marked new', err instanceof UnauthorizedError && p.pages.length === 2 && /<label[^>]*>(?:(?!<\/label>)[\s\S])*value="osfoundry:write"(?:(?!<\/label>)[\s\S])*class="new"/.test(p.pages[1]),
      `${err ? err.constructor.name : 'no error'}; consent pages: ${p.pages.length}`);
    if (p.pages.length < 2) return;
    await transport.finishAuth(p.result.code);
    check('after the second consent the token has both scopes', (p.tokens()?.scope || '').split(' ').sort().join(' ') === 'osfoundry:read osfoundry:write', `scope=${p.tokens()?.scope}`);
  } finally {
    await client.close();
  }
  transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: p });
  client = new Client({ name: 'foundry-oauth-check', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tabs = await client.callTool({ name: 'list_note_tabs', arguments: { note_id: noteId } });
    const made = await client.callTool({
      name: 'create_note_tab',
      arguments: { note_id: noteId, tab_type: 'sheet', label: 'By step-up', expected_version: tabs.structuredContent?.version, idempotency_key: 'oauth-check-step-up' },
    });
    check('the write tool works after the step-up', !made.isError, short(JSON.stringify(made.structuredContent ?? made.content), 160));
  } finally {
    await client.close();
  }
});

// OAuth 2.1 makes state optional with PKCE, and this SDK sends none when
// its provider has no state(): the flow completes all the same.
await section('a provider without state()', async () => {
  const p = new MemoryProvider(browser, { name: 'oauth-check no state' });
  p.state = undefined;
  let { transport, err } = await connectUnsigned(p);
  let client;
  const au = p.authURL;
  check('without state(): the SDK sends no state, with PKCE S256', !!au && !au.searchParams.has('state') && au.searchParams.get('code_challenge_method') === 'S256', au ? short(au.search, 200) : `no authorization URL (${err?.constructor.name}: ${short(err?.message)})`);
  const r = p.result;
  check('without state: the consent page, then a code back with no state', !!r?.code && !r.error && !r.back.searchParams.has('state') && r.iss === asMeta?.issuer, r ? `${r.status} → ${short(r.location, 160)}` : 'no authorization result');
  if (!r?.code) return;
  await transport.finishAuth(r.code);
  check('without state: finishAuth gets tokens', !!p.tokens()?.access_token, `scope=${p.tokens()?.scope}`);
  transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: p });
  client = new Client({ name: 'foundry-oauth-check', version: '1.0.0' });
  await client.connect(transport);
  try {
    const list = await client.callTool({ name: 'list_notes', arguments: {} });
    check('without state: callTool list_notes works', !list.isError && JSON.stringify(list.structuredContent ?? list.content).includes('Welcome'), short(JSON.stringify(list.structuredContent ?? list.content), 160));
  } finally {
    await client.close();
  }
});

// A second client, registered by hand, for the manual flows below.
async function register(meta) {
  const res = await fetchT(`${base}/register`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(meta) });
  const text = await res.text();
  let json = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}
function authorizeURL(params) {
  const u = new URL(asMeta?.authorization_endpoint || `${base}/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}
// flow walks the authorization code flow by hand for clientId and answers
// the code and its verifier.
async function flow(clientId, { scopes } = {}) {
  const { verifier, challenge } = pkce();
  const state = b64url(randomBytes(8));
  const url = authorizeURL({
    response_type: 'code', client_id: clientId, redirect_uri: callback, state, code_challenge: challenge, code_challenge_method: 'S256',
    resource: mcpURL, scope: 'osfoundry:read osfoundry:write',
  });
  const r = await person(browser, url, { scopes });
  if (!r.code) throw new Error(`no code: ${r.location}`);
  return { code: r.code, verifier, state: r.state };
}
const exchange = (clientId, code, verifier) =>
  tokenRequest({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: callback, client_id: clientId, resource: mcpURL });

// authorizeRefusal opens an authorization URL with the signed-in browser and
// answers what came back: a redirect to the client with an error, or a page.
async function authorizeRefusal(params) {
  const r = await browser.go(authorizeURL(params));
  const back = r.location ? new URL(r.location) : undefined;
  return { ...r, back, error: back?.searchParams.get('error'), code: back?.searchParams.get('code'), iss: back?.searchParams.get('iss') };
}
const errPage = r => `${r.status} ${r.type.split(';')[0]}${r.location ? ` → ${short(r.location, 160)}` : ''} ${short(/<p class="err">([\s\S]*?)<\/p>/.exec(r.body)?.[1] ?? '', 160)}`;

await section('refusals, as an outside client', async () => {
  const reg = await register({ client_name: 'oauth-check refusals', redirect_uris: [callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' });
  check('POST /register (RFC 7591) with a loopback redirect: 201 and a client_id', reg.status === 201 && !!reg.json.client_id, `${reg.status} ${short(reg.text, 160)}`);
  const cid = reg.json.client_id;
  const good = { response_type: 'code', client_id: cid, redirect_uri: callback, state: b64url(randomBytes(12)), resource: mcpURL };
  const { challenge } = pkce();

  let r = await authorizeRefusal({ ...good, code_challenge: challenge, code_challenge_method: 'plain' });
  check('plain PKCE (code_challenge_method=plain) refused', !r.code && (r.error === 'invalid_request' || (r.status >= 400 && !r.location)), errPage(r));
  r = await authorizeRefusal({ ...good });
  check('no PKCE refused', !r.code && (r.error === 'invalid_request' || (r.status >= 400 && !r.location)), errPage(r));
  const { state: _, ...stateless } = good;
  r = await authorizeRefusal(stateless);
  check('neither state nor PKCE: refused on an error page, not by a redirect', r.status === 400 && !r.location && r.type.startsWith('text/html') && r.body.includes('invalid_state'), errPage(r));
  r = await authorizeRefusal({ ...good, code_challenge: challenge, code_challenge_method: 'S256', redirect_uri: 'http://evil.example.com/callback' });
  check('an unregistered redirect_uri gets an error page, not a redirect', r.status >= 400 && !r.location && r.type.startsWith('text/html'), errPage(r));
  r = await authorizeRefusal({ ...good, code_challenge: challenge, code_challenge_method: 'S256', resource: `${base}/elsewhere` });
  check('a resource that is not the /mcp URL refused (invalid_target)', !r.code && r.error === 'invalid_target', errPage(r));
  check('RFC 9207: iss in an error response too', r.iss === asMeta?.issuer, `iss=${r.iss}`);

  const a = await flow(cid);
  let t = await exchange(cid, a.code, pkce().verifier);
  check('a wrong code_verifier at /token → invalid_grant', t.status === 400 && t.json.error === 'invalid_grant', `${t.status} ${short(t.text, 200)}`);

  const b = await flow(cid);
  t = await exchange(cid, b.code, b.verifier);
  check('the code with its verifier → tokens', t.status === 200 && !!t.json.access_token, `${t.status} ${t.status === 200 ? `scope=${t.json.scope}` : short(t.text, 200)}`);
  const again = await exchange(cid, b.code, b.verifier);
  check('the same code used twice → invalid_grant', again.status === 400 && again.json.error === 'invalid_grant', `${again.status} ${short(again.text, 200)}`);

  const js = await register({ client_name: 'bad', redirect_uris: ['javascript:alert(1)'], token_endpoint_auth_method: 'none' });
  check('/register with a javascript: redirect → 400 invalid_redirect_uri', js.status === 400 && js.json.error === 'invalid_redirect_uri', `${js.status} ${short(js.text, 200)}`);

  // Client ID metadata documents on private addresses: refused at dial
  // time, so nothing is ever connected to. A listener on 127.0.0.1 counts
  // the connections it gets.
  let dialed = 0;
  const trap = net.createServer(s => {
    dialed++;
    s.destroy();
  });
  await new Promise(res => trap.listen(0, '127.0.0.1', res));
  try {
    const docs = ['https://127.0.0.1/client.json', 'https://10.0.0.1/x.json', `https://127.0.0.1:${trap.address().port}/client.json`, `https://localhost:${trap.address().port}/client.json`];
    for (const doc of docs) {
      r = await authorizeRefusal({ ...good, client_id: doc, code_challenge: challenge, code_challenge_method: 'S256' });
      check(`a client ID metadata document on a private address (${doc}) refused with an error page`, r.status >= 400 && !r.location && r.type.startsWith('text/html'), errPage(r));
    }
    check('no connection was made to the private address', dialed === 0, `${dialed} connections to 127.0.0.1:${trap.address().port}`);
  } finally {
    trap.close();
  }

  // A read-only grant calling a write tool: 403 insufficient_scope, scope=.
  const ro = await register({ client_name: 'oauth-check read-only', redirect_uris: [callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' });
  const c = await flow(ro.json.client_id, { scopes: ['osfoundry:read'] });
  t = await exchange(ro.json.client_id, c.code, c.verifier);
  check('consent with read only → a token with scope osfoundry:read', t.status === 200 && t.json.scope === 'osfoundry:read', `${t.status} scope=${t.json.scope}`);
  const readToken = t.json.access_token;
  const w = await mcpCall('tools/call', { name: 'create_note_tab', arguments: { note_id: noteId ?? 'note_x', tab_type: 'sheet', label: 'refused', expected_version: 1, idempotency_key: 'oauth-check-ro' } }, readToken);
  check('a read-only grant calling a write tool → 403 insufficient_scope with scope=', w.status === 403 && /error="insufficient_scope"/.test(w.challenge) && /scope="[^"]*osfoundry:write/.test(w.challenge), `${w.status} WWW-Authenticate: ${w.challenge}`);
  const rd = await callList(readToken);
  check('the read-only token still reads', rd.status === 200, `${rd.status}`);

  // The person revokes that connection with the CLI: the next call is 401.
  const run = promisify(execFile);
  const { stdout } = await run(bin, ['connections', 'list', '--data', data], { timeout: 20000 });
  const line = stdout.split('\n').find(l => l.includes('oauth-check read-only'));
  const id = line?.trim().split(/\s+/)[0];
  check('foundry connections list shows the read-only connection', !!id, line ? short(line, 200) : short(stdout, 300));
  if (id) {
    const out = await run(bin, ['connections', 'revoke', id, '--data', data], { timeout: 20000 });
    // Every node sees a revocation within 1 s: poll that long, no more.
    let after;
    const until = Date.now() + 1000;
    do {
      after = await callList(readToken);
      if (after.status === 401) break;
      await sleep(100);
    } while (Date.now() < until);
    check('foundry connections revoke → the next call 401 invalid_token with resource_metadata (within 1 s)', after.status === 401 && /error="invalid_token"/.test(after.challenge) && /resource_metadata=/.test(after.challenge),
      `${short(out.stdout)}; then ${after.status} WWW-Authenticate: ${after.challenge}`);
  }
});

await section('refresh reuse after the grace period', async () => {
  if (!rotatedAt || !newTokens?.refresh_token) throw new Error('no rotation happened');
  const wait = rotatedAt + graceMs + 1000 - Date.now();
  if (wait > 0) {
    console.log(`   (waiting ${Math.ceil(wait / 1000)} s for the ${graceMs / 1000} s refresh grace period to end)`);
    await sleep(Math.min(wait, graceMs + 1000));
  }
  const old = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client1.client_id });
  check('the old refresh token used again after the grace period → invalid_grant', old.status === 400 && old.json.error === 'invalid_grant', `${old.status} ${short(old.text, 200)}`);
  const fresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: newTokens.refresh_token, client_id: client1.client_id });
  check('then the new refresh token fails too (the family is revoked)', fresh.status === 400 && fresh.json.error === 'invalid_grant', `${fresh.status} ${short(fresh.text, 200)}`);
});

console.log(`oauth-check: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

--
-- PostgreSQL database dump
--

\restrict hxqTjwEtD2Tf86POBcLEc4DASiTYrhGtdzcoU9HB5CXnaLEetGRNaf8TIKBlueu

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: foundry_fixture_release_1; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA foundry_fixture_release_1;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: event_horizons; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.event_horizons (
    resource_type text NOT NULL,
    resource_id text NOT NULL,
    pruned_through bigint NOT NULL
);


--
-- Name: events; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.events (
    cursor bigint NOT NULL,
    workspace_id text NOT NULL,
    resource_type text NOT NULL,
    resource_id text NOT NULL,
    kind text NOT NULL,
    version bigint NOT NULL,
    at_us bigint NOT NULL
);


--
-- Name: events_cursor_seq; Type: SEQUENCE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE SEQUENCE foundry_fixture_release_1.events_cursor_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: events_cursor_seq; Type: SEQUENCE OWNED BY; Schema: foundry_fixture_release_1; Owner: -
--

ALTER SEQUENCE foundry_fixture_release_1.events_cursor_seq OWNED BY foundry_fixture_release_1.events.cursor;


--
-- Name: idempotency_keys; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.idempotency_keys (
    scope_type text NOT NULL,
    scope_id text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    result text NOT NULL,
    version bigint NOT NULL,
    created_us bigint NOT NULL
);


--
-- Name: objects; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.objects (
    kind text NOT NULL,
    id text NOT NULL,
    workspace_id text NOT NULL,
    parent_id text NOT NULL,
    doc text NOT NULL,
    created_us bigint NOT NULL
);


--
-- Name: resource_versions; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.resource_versions (
    type text NOT NULL,
    id text NOT NULL,
    version bigint NOT NULL,
    kind text NOT NULL,
    actor text NOT NULL,
    changed text NOT NULL,
    doc text NOT NULL,
    at_us bigint NOT NULL
);


--
-- Name: resources; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.resources (
    type text NOT NULL,
    id text NOT NULL,
    workspace_id text NOT NULL,
    owner_id text NOT NULL,
    title text NOT NULL,
    approved integer DEFAULT 0 NOT NULL,
    version bigint NOT NULL,
    doc text NOT NULL,
    updated_us bigint NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.schema_migrations (
    version integer NOT NULL
);


--
-- Name: tokens; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.tokens (
    id text NOT NULL,
    workspace_id text NOT NULL,
    user_id text NOT NULL,
    name text NOT NULL,
    hash text NOT NULL,
    scopes text NOT NULL,
    notes_grant text,
    rooms_grant text,
    created_us bigint NOT NULL,
    revoked_us bigint,
    last_used_us bigint
);


--
-- Name: users; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.users (
    id text NOT NULL,
    workspace_id text NOT NULL,
    email text NOT NULL,
    name text NOT NULL,
    password_hash text DEFAULT ''::text NOT NULL,
    role text NOT NULL,
    created_us bigint NOT NULL
);


--
-- Name: workspaces; Type: TABLE; Schema: foundry_fixture_release_1; Owner: -
--

CREATE TABLE foundry_fixture_release_1.workspaces (
    id text NOT NULL,
    name text NOT NULL,
    created_us bigint NOT NULL
);


--
-- Name: events cursor; Type: DEFAULT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.events ALTER COLUMN cursor SET DEFAULT nextval('foundry_fixture_release_1.events_cursor_seq'::regclass);


--
-- Data for Name: event_horizons; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--



--
-- Data for Name: events; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.events VALUES (1, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'note_created', 1, 1796126248495114);
INSERT INTO foundry_fixture_release_1.events VALUES (2, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_edited', 2, 1796126248497240);
INSERT INTO foundry_fixture_release_1.events VALUES (3, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_edited', 3, 1796126248499165);
INSERT INTO foundry_fixture_release_1.events VALUES (4, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_created', 4, 1796126248500212);
INSERT INTO foundry_fixture_release_1.events VALUES (5, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_edited', 5, 1796126248501647);
INSERT INTO foundry_fixture_release_1.events VALUES (6, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_created', 6, 1796126248509832);
INSERT INTO foundry_fixture_release_1.events VALUES (7, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_edited', 7, 1796126248513824);
INSERT INTO foundry_fixture_release_1.events VALUES (8, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'tab_edited', 8, 1796126248516984);
INSERT INTO foundry_fixture_release_1.events VALUES (9, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'source_added', 9, 1796126248518520);
INSERT INTO foundry_fixture_release_1.events VALUES (10, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'source_added', 10, 1796126248521399);
INSERT INTO foundry_fixture_release_1.events VALUES (11, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'file_added', 11, 1796126248522654);
INSERT INTO foundry_fixture_release_1.events VALUES (12, 'ws_jqglscdriu4aulnk', 'note', 'note_joia5jc3ym4prvyt', 'file_added', 12, 1796126248525016);
INSERT INTO foundry_fixture_release_1.events VALUES (13, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'note_created', 1, 1796126248526695);
INSERT INTO foundry_fixture_release_1.events VALUES (14, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'text_replaced', 2, 1796126248528289);
INSERT INTO foundry_fixture_release_1.events VALUES (15, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'text_replaced', 3, 1796126248529943);
INSERT INTO foundry_fixture_release_1.events VALUES (16, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'text_replaced', 4, 1796126248531366);
INSERT INTO foundry_fixture_release_1.events VALUES (17, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'restored', 5, 1796126248532336);
INSERT INTO foundry_fixture_release_1.events VALUES (18, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'access_changed', 6, 1796126248533781);
INSERT INTO foundry_fixture_release_1.events VALUES (19, 'ws_jqglscdriu4aulnk', 'note', 'note_bujvob7wjkkq3rjr', 'access_changed', 7, 1796126248535581);
INSERT INTO foundry_fixture_release_1.events VALUES (20, 'ws_jqglscdriu4aulnk', 'note', 'note_ivezse6umj2f4cnd', 'note_created', 1, 1796126248536267);
INSERT INTO foundry_fixture_release_1.events VALUES (21, 'ws_jqglscdriu4aulnk', 'note', 'note_ivezse6umj2f4cnd', 'text_replaced', 2, 1796126248537235);
INSERT INTO foundry_fixture_release_1.events VALUES (22, 'ws_jqglscdriu4aulnk', 'room', 'room_zsckea5qoz4ddmnn', 'room_created', 1, 1796126248539913);
INSERT INTO foundry_fixture_release_1.events VALUES (23, 'ws_jqglscdriu4aulnk', 'room', 'room_zsckea5qoz4ddmnn', 'app_proposed', 2, 1796126248540878);
INSERT INTO foundry_fixture_release_1.events VALUES (24, 'ws_jqglscdriu4aulnk', 'room', 'room_zsckea5qoz4ddmnn', 'app_approved', 3, 1796126248542727);
INSERT INTO foundry_fixture_release_1.events VALUES (25, 'ws_jqglscdriu4aulnk', 'room', 'room_zsckea5qoz4ddmnn', 'app_proposed', 4, 1796126248543767);
INSERT INTO foundry_fixture_release_1.events VALUES (26, 'ws_jqglscdriu4aulnk', 'room', 'room_zsckea5qoz4ddmnn', 'app_declined', 5, 1796126248550202);
INSERT INTO foundry_fixture_release_1.events VALUES (27, 'ws_jqglscdriu4aulnk', 'repository', 'repo_f6u3y5oysonddhre', 'version_pushed', 1, 1796126248553506);
INSERT INTO foundry_fixture_release_1.events VALUES (28, 'ws_jqglscdriu4aulnk', 'repository', 'repo_f6u3y5oysonddhre', 'version_pushed', 2, 1796126248556646);
INSERT INTO foundry_fixture_release_1.events VALUES (29, 'ws_jqglscdriu4aulnk', 'room', 'room_zsckea5qoz4ddmnn', 'app_proposed', 6, 1796126248557799);


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0001', 'aec4d313ea59439f594c3b8b5d45243b', '{"note_id":"note_joia5jc3ym4prvyt","version":2,"replayed":false,"tab_id":"markdown","operation":"replace_text","bytes":126}', 2, 1796126248497240);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0002', 'b43879f0188a7dbd02c4b54502d87267', '{"note_id":"note_joia5jc3ym4prvyt","version":3,"replayed":false,"tab_id":"markdown","operation":"replace_text","bytes":163}', 3, 1796126248499165);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0003', '0ea3411e88716dab68569907576f67b7', '{"note_id":"note_joia5jc3ym4prvyt","version":4,"replayed":false,"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":3}', 4, 1796126248500212);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0004', '2def69a07ba447e21c22e0ab5f3ee9ed', '{"note_id":"note_joia5jc3ym4prvyt","version":5,"replayed":false,"tab_id":"slides-1-mx4n6z3o","operation":"slide_add","slide_ids":["slide-4"]}', 5, 1796126248501647);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0005', 'e6ba9a37b8ca19cc8d5bdf43e25eb176', '{"note_id":"note_joia5jc3ym4prvyt","version":6,"replayed":false,"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","slides":0}', 6, 1796126248509832);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0006', '3987bf7198cdfc07865f399009bae2f3', '{"note_id":"note_joia5jc3ym4prvyt","version":7,"replayed":false,"tab_id":"sheet-2-mx4n6z3x","operation":"sheet_set_range","cells_written":300}', 7, 1796126248513824);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-key-0007', '486798349e293ec5278ff7a534c5cd5a', '{"note_id":"note_joia5jc3ym4prvyt","version":8,"replayed":false,"tab_id":"sheet-2-mx4n6z3x","operation":"sheet_set_range","cells_written":4}', 8, 1796126248516984);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-src-0', '0e27fbd2ddf6afde9fe8e1019ef945ba', '{"note_id":"note_joia5jc3ym4prvyt","version":9,"replayed":false,"source_id":"src-6","url":"https://modelcontextprotocol.io/specification","normalized_url":"https://modelcontextprotocol.io/specification","title":"Model Context Protocol","already_attached":false}', 9, 1796126248518520);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('note', 'note_joia5jc3ym4prvyt', 'release-1-src-1', '808d89c206e9f86a060b62ee307a045e', '{"note_id":"note_joia5jc3ym4prvyt","version":10,"replayed":false,"source_id":"src-7","url":"https://www.unicode.org/faq/?ref=Ärger#x","normalized_url":"https://unicode.org/faq?ref=Ärger","title":"Ünïcode FAQ","already_attached":false}', 10, 1796126248521399);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('room', 'room_zsckea5qoz4ddmnn', 'release-1-snippet-1', '2f007d4e4534e971359d23b47acd09d4', '{"proposal_id":"prop_liuijdcqtia6rnjj","instance_id":"app-1","room_id":"room_zsckea5qoz4ddmnn","status":"pending_review","version":2,"next_step":"","replayed":false}', 2, 1796126248540878);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('room/people', 'room_zsckea5qoz4ddmnn', 'decide:prop_liuijdcqtia6rnjj', 'app_approved', '{"status":"approved"}', 3, 1796126248542727);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('room', 'room_zsckea5qoz4ddmnn', 'release-1-snippet-2', '75cf0bcacd6bf7c64f237cca3e4cdff2', '{"proposal_id":"prop_qqn6u3nqf7c3q2kg","instance_id":"app-2","room_id":"room_zsckea5qoz4ddmnn","status":"pending_review","version":4,"next_step":"","replayed":false}', 4, 1796126248543767);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('room/people', 'room_zsckea5qoz4ddmnn', 'decide:prop_qqn6u3nqf7c3q2kg', 'app_declined', '{"status":"declined"}', 5, 1796126248550202);
INSERT INTO foundry_fixture_release_1.idempotency_keys VALUES ('room', 'room_zsckea5qoz4ddmnn', 'release-1-repo-1', '3585563688b8aa93909fbafd11be0876', '{"proposal_id":"prop_oyvnmlj2kchgd6es","instance_id":"app-3","room_id":"room_zsckea5qoz4ddmnn","status":"pending_review","version":6,"next_step":"","replayed":false}', 6, 1796126248557799);


--
-- Data for Name: objects; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.objects VALUES ('proposal', 'prop_liuijdcqtia6rnjj', 'ws_jqglscdriu4aulnk', 'room_zsckea5qoz4ddmnn', '{"proposal_id":"prop_liuijdcqtia6rnjj","room_id":"room_zsckea5qoz4ddmnn","instance_id":"app-1","name":"Hello","kind":"snippet","files":{"src/App.tsx":"export default function App() {\n  return \u003ch1\u003eHällo\u003c/h1\u003e\n}\n"},"status":"approved","proposed_by":"token:tok_nxo6ko77qlinrhui","created_at":"2026-12-01T11:57:28Z","decided_at":"2026-12-01T11:57:28Z","decided_by":"user:usr_ribcbtfveycb6ub5"}', 1796126248540878);
INSERT INTO foundry_fixture_release_1.objects VALUES ('proposal', 'prop_qqn6u3nqf7c3q2kg', 'ws_jqglscdriu4aulnk', 'room_zsckea5qoz4ddmnn', '{"proposal_id":"prop_qqn6u3nqf7c3q2kg","room_id":"room_zsckea5qoz4ddmnn","instance_id":"app-2","name":"Clock","kind":"snippet","files":{"src/App.tsx":"export default () =\u003e null\n"},"status":"declined","proposed_by":"token:tok_nxo6ko77qlinrhui","created_at":"2026-12-01T11:57:28Z","decided_at":"2026-12-01T11:57:28Z","decided_by":"user:usr_ribcbtfveycb6ub5"}', 1796126248543767);
INSERT INTO foundry_fixture_release_1.objects VALUES ('repo_version', 'ver_tflrwarllb5turdw', 'ws_jqglscdriu4aulnk', 'repo_f6u3y5oysonddhre', '{"files":{"package.json":"eyJuYW1lIjoic3RhbmR1cC10aW1lciIsInZlcnNpb24iOiIxLjAuMCJ9Cg=="}}', 1796126248553506);
INSERT INTO foundry_fixture_release_1.objects VALUES ('repo_version', 'ver_dlmdzkbcyilngxhj', 'ws_jqglscdriu4aulnk', 'repo_f6u3y5oysonddhre', '{"files":{"package.json":"eyJuYW1lIjoic3RhbmR1cC10aW1lciIsInZlcnNpb24iOiIxLjEuMCJ9Cg==","src/App.tsx":"ZXhwb3J0IGRlZmF1bHQgKCkgPT4gPHA+4o+xPC9wPgo="}}', 1796126248556646);
INSERT INTO foundry_fixture_release_1.objects VALUES ('proposal', 'prop_oyvnmlj2kchgd6es', 'ws_jqglscdriu4aulnk', 'room_zsckea5qoz4ddmnn', '{"proposal_id":"prop_oyvnmlj2kchgd6es","room_id":"room_zsckea5qoz4ddmnn","instance_id":"app-3","name":"Standup timer","kind":"repository","repository_id":"repo_f6u3y5oysonddhre","version_id":"ver_tflrwarllb5turdw","status":"pending","proposed_by":"token:tok_nxo6ko77qlinrhui","created_at":"2026-12-01T11:57:28Z"}', 1796126248557799);


--
-- Data for Name: resource_versions; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 1, 'note_created', 'user:usr_ribcbtfveycb6ub5', '[]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n","sources":[],"files":[],"next_item":1}', 1796126248495114);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 2, 'tab_edited', 'token:tok_nxo6ko77qlinrhui', '["markdown"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n","sources":[],"files":[],"next_item":1}', 1796126248497240);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 3, 'tab_edited', 'token:tok_nxo6ko77qlinrhui', '["markdown"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[],"files":[],"next_item":1}', 1796126248499165);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 4, 'tab_created', 'token:tok_nxo6ko77qlinrhui', '["slides-1-mx4n6z3o"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""}]}],"next_tab_n":2,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[],"files":[],"next_item":4}', 1796126248500212);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 5, 'tab_edited', 'token:tok_nxo6ko77qlinrhui', '["slides-1-mx4n6z3o"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]}],"next_tab_n":2,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[],"files":[],"next_item":5}', 1796126248501647);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 6, 'tab_created', 'token:tok_nxo6ko77qlinrhui', '["sheet-2-mx4n6z3x"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[],"files":[],"next_item":6}', 1796126248509832);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 7, 'tab_edited', 'token:tok_nxo6ko77qlinrhui', '["sheet-2-mx4n6z3x"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,3.25,false,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,4.25,true,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[],"files":[],"next_item":6}', 1796126248513824);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 8, 'tab_edited', 'token:tok_nxo6ko77qlinrhui', '["sheet-2-mx4n6z3x"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,"changed",42,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,true,null,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[],"files":[],"next_item":6}', 1796126248516984);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 5, 'restored', 'user:usr_ribcbtfveycb6ub5', '["markdown","files","sources"]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft one","sources":[],"files":[],"next_item":1}', 1796126248532336);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 9, 'source_added', 'token:tok_nxo6ko77qlinrhui', '["sources"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,"changed",42,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,true,null,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[{"source_id":"src-6","title":"Model Context Protocol","url":"https://modelcontextprotocol.io/specification","normalized_url":"https://modelcontextprotocol.io/specification","added_at":"2026-12-01T11:57:28Z"}],"files":[],"next_item":7}', 1796126248518520);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 10, 'source_added', 'token:tok_nxo6ko77qlinrhui', '["sources"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,"changed",42,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,true,null,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[{"source_id":"src-6","title":"Model Context Protocol","url":"https://modelcontextprotocol.io/specification","normalized_url":"https://modelcontextprotocol.io/specification","added_at":"2026-12-01T11:57:28Z"},{"source_id":"src-7","title":"Ünïcode FAQ","url":"https://www.unicode.org/faq/?ref=Ärger#x","normalized_url":"https://unicode.org/faq?ref=Ärger","added_at":"2026-12-01T11:57:28Z"}],"files":[],"next_item":8}', 1796126248521399);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 11, 'file_added', 'user:usr_ribcbtfveycb6ub5', '["files","file-8"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,"changed",42,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,true,null,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[{"source_id":"src-6","title":"Model Context Protocol","url":"https://modelcontextprotocol.io/specification","normalized_url":"https://modelcontextprotocol.io/specification","added_at":"2026-12-01T11:57:28Z"},{"source_id":"src-7","title":"Ünïcode FAQ","url":"https://www.unicode.org/faq/?ref=Ärger#x","normalized_url":"https://unicode.org/faq?ref=Ärger","added_at":"2026-12-01T11:57:28Z"}],"files":[{"file_id":"file-8","name":"photo-ü.jpg","content_type":"image/jpeg","size_bytes":123456,"sha256":"0000000000000000000000000000000000000000000000000000000000000001","added_at":"2026-12-01T11:57:28Z"}],"next_item":9}', 1796126248522654);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_joia5jc3ym4prvyt', 12, 'file_added', 'user:usr_ribcbtfveycb6ub5', '["files","file-9"]', '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,"changed",42,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,true,null,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[{"source_id":"src-6","title":"Model Context Protocol","url":"https://modelcontextprotocol.io/specification","normalized_url":"https://modelcontextprotocol.io/specification","added_at":"2026-12-01T11:57:28Z"},{"source_id":"src-7","title":"Ünïcode FAQ","url":"https://www.unicode.org/faq/?ref=Ärger#x","normalized_url":"https://unicode.org/faq?ref=Ärger","added_at":"2026-12-01T11:57:28Z"}],"files":[{"file_id":"file-8","name":"photo-ü.jpg","content_type":"image/jpeg","size_bytes":123456,"sha256":"0000000000000000000000000000000000000000000000000000000000000001","added_at":"2026-12-01T11:57:28Z"},{"file_id":"file-9","name":"data.csv","content_type":"text/csv","size_bytes":789,"sha256":"0000000000000000000000000000000000000000000000000000000000000002","added_at":"2026-12-01T11:57:28Z"}],"next_item":10}', 1796126248525016);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 1, 'note_created', 'user:usr_ribcbtfveycb6ub5', '[]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"","sources":[],"files":[],"next_item":1}', 1796126248526695);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 2, 'text_replaced', 'user:usr_ribcbtfveycb6ub5', '["markdown"]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft one","sources":[],"files":[],"next_item":1}', 1796126248528289);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 3, 'text_replaced', 'user:usr_ribcbtfveycb6ub5', '["markdown"]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft two","sources":[],"files":[],"next_item":1}', 1796126248529943);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 4, 'text_replaced', 'user:usr_ribcbtfveycb6ub5', '["markdown"]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft three","sources":[],"files":[],"next_item":1}', 1796126248531366);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 6, 'access_changed', 'user:usr_ribcbtfveycb6ub5', '[]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft one","sources":[],"files":[],"next_item":1}', 1796126248533781);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_bujvob7wjkkq3rjr', 7, 'access_changed', 'user:usr_ribcbtfveycb6ub5', '[]', '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft one","sources":[],"files":[],"next_item":1}', 1796126248535581);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_ivezse6umj2f4cnd', 1, 'note_created', 'user:usr_ribcbtfveycb6ub5', '[]', '{"title":"Private — not shared","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"only people see this","sources":[],"files":[],"next_item":1}', 1796126248536267);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('note', 'note_ivezse6umj2f4cnd', 2, 'text_replaced', 'user:usr_ribcbtfveycb6ub5', '["markdown"]', '{"title":"Private — not shared","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"only people see this, still","sources":[],"files":[],"next_item":1}', 1796126248537235);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('room', 'room_zsckea5qoz4ddmnn', 1, 'room_created', 'user:usr_ribcbtfveycb6ub5', '[]', '{"name":"Team room","apps":[],"next_instance":1}', 1796126248539913);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('room', 'room_zsckea5qoz4ddmnn', 2, 'app_proposed', 'token:tok_nxo6ko77qlinrhui', '["app-1"]', '{"name":"Team room","apps":[],"next_instance":2,"proposals":{"app-1":"prop_liuijdcqtia6rnjj"}}', 1796126248540878);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('room', 'room_zsckea5qoz4ddmnn', 3, 'app_approved', 'user:usr_ribcbtfveycb6ub5', '["app-1"]', '{"name":"Team room","apps":[{"instance_id":"app-1","name":"Hello","kind":"snippet","proposal_id":"prop_liuijdcqtia6rnjj","state":"in_launcher","added_at":"2026-12-01T11:57:28Z","build":{"state":"none"}}],"next_instance":2,"proposals":{"app-1":"prop_liuijdcqtia6rnjj"}}', 1796126248542727);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('room', 'room_zsckea5qoz4ddmnn', 4, 'app_proposed', 'token:tok_nxo6ko77qlinrhui', '["app-2"]', '{"name":"Team room","apps":[{"instance_id":"app-1","name":"Hello","kind":"snippet","proposal_id":"prop_liuijdcqtia6rnjj","state":"in_launcher","added_at":"2026-12-01T11:57:28Z","build":{"state":"none"}}],"next_instance":3,"proposals":{"app-1":"prop_liuijdcqtia6rnjj","app-2":"prop_qqn6u3nqf7c3q2kg"}}', 1796126248543767);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('room', 'room_zsckea5qoz4ddmnn', 5, 'app_declined', 'user:usr_ribcbtfveycb6ub5', '["app-2"]', '{"name":"Team room","apps":[{"instance_id":"app-1","name":"Hello","kind":"snippet","proposal_id":"prop_liuijdcqtia6rnjj","state":"in_launcher","added_at":"2026-12-01T11:57:28Z","build":{"state":"none"}}],"next_instance":3,"proposals":{"app-1":"prop_liuijdcqtia6rnjj","app-2":"prop_qqn6u3nqf7c3q2kg"}}', 1796126248550202);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('repository', 'repo_f6u3y5oysonddhre', 1, 'version_pushed', 'user:usr_ribcbtfveycb6ub5', '["ver_tflrwarllb5turdw"]', '{"repository_id":"repo_f6u3y5oysonddhre","name":"standup-timer","versions":[{"version_id":"ver_tflrwarllb5turdw","files":1,"bytes":43,"sha256":"7ef8cc7677141d2990bc0110fd188103f20787cd4714602c6c4f2e0c1318aad5","pushed_at":"2026-12-01T11:57:28Z","pushed_by":"user:usr_ribcbtfveycb6ub5"}],"created_at":"2026-12-01T11:57:28Z"}', 1796126248553506);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('repository', 'repo_f6u3y5oysonddhre', 2, 'version_pushed', 'user:usr_ribcbtfveycb6ub5', '["ver_dlmdzkbcyilngxhj"]', '{"repository_id":"repo_f6u3y5oysonddhre","name":"standup-timer","versions":[{"version_id":"ver_tflrwarllb5turdw","files":1,"bytes":43,"sha256":"7ef8cc7677141d2990bc0110fd188103f20787cd4714602c6c4f2e0c1318aad5","pushed_at":"2026-12-01T11:57:28Z","pushed_by":"user:usr_ribcbtfveycb6ub5"},{"version_id":"ver_dlmdzkbcyilngxhj","files":2,"bytes":75,"sha256":"8e22613ab343c1453485ed204a0de11e0e8eb09db412c278bf8480e9ef153f43","pushed_at":"2026-12-01T11:57:28Z","pushed_by":"user:usr_ribcbtfveycb6ub5"}],"created_at":"2026-12-01T11:57:28Z"}', 1796126248556646);
INSERT INTO foundry_fixture_release_1.resource_versions VALUES ('room', 'room_zsckea5qoz4ddmnn', 6, 'app_proposed', 'token:tok_nxo6ko77qlinrhui', '["app-3"]', '{"name":"Team room","apps":[{"instance_id":"app-1","name":"Hello","kind":"snippet","proposal_id":"prop_liuijdcqtia6rnjj","state":"in_launcher","added_at":"2026-12-01T11:57:28Z","build":{"state":"none"}}],"next_instance":4,"proposals":{"app-1":"prop_liuijdcqtia6rnjj","app-2":"prop_qqn6u3nqf7c3q2kg","app-3":"prop_oyvnmlj2kchgd6es"}}', 1796126248557799);


--
-- Data for Name: resources; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.resources VALUES ('note', 'note_joia5jc3ym4prvyt', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'Field notes — Ärger über Ünïcode ✓ 研究', 1, 12, '{"title":"Field notes — Ärger über Ünïcode ✓ 研究","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"},{"tab_id":"slides-1-mx4n6z3o","type":"slides","label":"Deck — Übersicht","slides":[{"slide_id":"slide-1","title":"Why","body":"Because 🧪","notes":""},{"slide_id":"slide-2","title":"How","body":"Carefully","notes":"Speaker notes: ünïcode"},{"slide_id":"slide-3","title":"When","body":"","notes":""},{"slide_id":"slide-4","title":"Questions?","body":"Ask away","notes":""}]},{"tab_id":"sheet-2-mx4n6z3x","type":"sheet","label":"Measurements","sheets":[{"sheet_id":"sheet-5","name":"Sheet1","cells":[["Sample","Mass (g)","Temp °C","OK",null,"Note","日本","","x",0,false,"end"],["r1c0 ü",101,1.25,false,null,-1000000005,"r1c6 ü",107,1.25,false,null,-1000000011],["r2c0 ü",201,2.25,true,null,-1000000005,"r2c6 ü",207,2.25,true,null,-1000000011],["r3c0 ü",301,"changed",42,null,-1000000005,"r3c6 ü",307,3.25,false,null,-1000000011],["r4c0 ü",401,true,null,null,-1000000005,"r4c6 ü",407,4.25,true,null,-1000000011],["r5c0 ü",501,5.25,false,null,-1000000005,"r5c6 ü",507,5.25,false,null,-1000000011],["r6c0 ü",601,6.25,true,null,-1000000005,"r6c6 ü",607,6.25,true,null,-1000000011],["r7c0 ü",701,7.25,false,null,-1000000005,"r7c6 ü",707,7.25,false,null,-1000000011],["r8c0 ü",801,8.25,true,null,-1000000005,"r8c6 ü",807,8.25,true,null,-1000000011],["r9c0 ü",901,9.25,false,null,-1000000005,"r9c6 ü",907,9.25,false,null,-1000000011],["r10c0 ü",1001,10.25,true,null,-1000000005,"r10c6 ü",1007,10.25,true,null,-1000000011],["r11c0 ü",1101,11.25,false,null,-1000000005,"r11c6 ü",1107,11.25,false,null,-1000000011],["r12c0 ü",1201,12.25,true,null,-1000000005,"r12c6 ü",1207,12.25,true,null,-1000000011],["r13c0 ü",1301,13.25,false,null,-1000000005,"r13c6 ü",1307,13.25,false,null,-1000000011],["r14c0 ü",1401,14.25,true,null,-1000000005,"r14c6 ü",1407,14.25,true,null,-1000000011],["r15c0 ü",1501,15.25,false,null,-1000000005,"r15c6 ü",1507,15.25,false,null,-1000000011],["r16c0 ü",1601,16.25,true,null,-1000000005,"r16c6 ü",1607,16.25,true,null,-1000000011],["r17c0 ü",1701,17.25,false,null,-1000000005,"r17c6 ü",1707,17.25,false,null,-1000000011],["r18c0 ü",1801,18.25,true,null,-1000000005,"r18c6 ü",1807,18.25,true,null,-1000000011],["r19c0 ü",1901,19.25,false,null,-1000000005,"r19c6 ü",1907,19.25,false,null,-1000000011],["r20c0 ü",2001,20.25,true,null,-1000000005,"r20c6 ü",2007,20.25,true,null,-1000000011],["r21c0 ü",2101,21.25,false,null,-1000000005,"r21c6 ü",2107,21.25,false,null,-1000000011],["r22c0 ü",2201,22.25,true,null,-1000000005,"r22c6 ü",2207,22.25,true,null,-1000000011],["r23c0 ü",2301,23.25,false,null,-1000000005,"r23c6 ü",2307,23.25,false,null,-1000000011],["r24c0 ü",2401,24.25,true,null,-1000000005,"r24c6 ü",2407,24.25,true,null,-1000000011]]}]}],"next_tab_n":3,"markdown":"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n","sources":[{"source_id":"src-6","title":"Model Context Protocol","url":"https://modelcontextprotocol.io/specification","normalized_url":"https://modelcontextprotocol.io/specification","added_at":"2026-12-01T11:57:28Z"},{"source_id":"src-7","title":"Ünïcode FAQ","url":"https://www.unicode.org/faq/?ref=Ärger#x","normalized_url":"https://unicode.org/faq?ref=Ärger","added_at":"2026-12-01T11:57:28Z"}],"files":[{"file_id":"file-8","name":"photo-ü.jpg","content_type":"image/jpeg","size_bytes":123456,"sha256":"0000000000000000000000000000000000000000000000000000000000000001","added_at":"2026-12-01T11:57:28Z"},{"file_id":"file-9","name":"data.csv","content_type":"text/csv","size_bytes":789,"sha256":"0000000000000000000000000000000000000000000000000000000000000002","added_at":"2026-12-01T11:57:28Z"}],"next_item":10}', 1796126248525016);
INSERT INTO foundry_fixture_release_1.resources VALUES ('note', 'note_bujvob7wjkkq3rjr', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'Budget 2027', 1, 7, '{"title":"Budget 2027","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"Draft one","sources":[],"files":[],"next_item":1}', 1796126248535581);
INSERT INTO foundry_fixture_release_1.resources VALUES ('note', 'note_ivezse6umj2f4cnd', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'Private — not shared', 0, 2, '{"title":"Private — not shared","tabs":[{"tab_id":"markdown","type":"markdown","label":"Note"},{"tab_id":"files","type":"files","label":"Files"},{"tab_id":"sources","type":"sources","label":"Sources"}],"next_tab_n":1,"markdown":"only people see this, still","sources":[],"files":[],"next_item":1}', 1796126248537235);
INSERT INTO foundry_fixture_release_1.resources VALUES ('room', 'room_zsckea5qoz4ddmnn', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'Team room', 1, 6, '{"name":"Team room","apps":[{"instance_id":"app-1","name":"Hello","kind":"snippet","proposal_id":"prop_liuijdcqtia6rnjj","state":"in_launcher","added_at":"2026-12-01T11:57:28Z","build":{"state":"none"}}],"next_instance":4,"proposals":{"app-1":"prop_liuijdcqtia6rnjj","app-2":"prop_qqn6u3nqf7c3q2kg","app-3":"prop_oyvnmlj2kchgd6es"}}', 1796126248557799);
INSERT INTO foundry_fixture_release_1.resources VALUES ('repository', 'repo_f6u3y5oysonddhre', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'standup-timer', 0, 2, '{"repository_id":"repo_f6u3y5oysonddhre","name":"standup-timer","versions":[{"version_id":"ver_tflrwarllb5turdw","files":1,"bytes":43,"sha256":"7ef8cc7677141d2990bc0110fd188103f20787cd4714602c6c4f2e0c1318aad5","pushed_at":"2026-12-01T11:57:28Z","pushed_by":"user:usr_ribcbtfveycb6ub5"},{"version_id":"ver_dlmdzkbcyilngxhj","files":2,"bytes":75,"sha256":"8e22613ab343c1453485ed204a0de11e0e8eb09db412c278bf8480e9ef153f43","pushed_at":"2026-12-01T11:57:28Z","pushed_by":"user:usr_ribcbtfveycb6ub5"}],"created_at":"2026-12-01T11:57:28Z"}', 1796126248556646);


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.schema_migrations VALUES (1);
INSERT INTO foundry_fixture_release_1.schema_migrations VALUES (2);
INSERT INTO foundry_fixture_release_1.schema_migrations VALUES (3);


--
-- Data for Name: tokens; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.tokens VALUES ('tok_nxo6ko77qlinrhui', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'all', 'd7f336b0c7426c34b25d0912cf1fe07a7c9b2b9bf6af6db5c7f61a050e79d733', 'osfoundry:read osfoundry:write', NULL, NULL, 1796126248493966, NULL, NULL);
INSERT INTO foundry_fixture_release_1.tokens VALUES ('tok_l37wxgmxox5lgbyz', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'research-read', '18b632f8fe742b470964d161e85d7bbfd6be0d7d0c7833e42242a54346e77275', 'osfoundry:read', '["note_joia5jc3ym4prvyt"]', '[]', 1796126248559199, NULL, NULL);
INSERT INTO foundry_fixture_release_1.tokens VALUES ('tok_qmja54cndtoji323', 'ws_jqglscdriu4aulnk', 'usr_ribcbtfveycb6ub5', 'revoked', 'bfc8c61812493a92683046e4ce6332fe91054ec695c456fb2bfa28bf228e7850', 'osfoundry:read', NULL, NULL, 1796126248559755, 1796126248562053, NULL);


--
-- Data for Name: users; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.users VALUES ('usr_ribcbtfveycb6ub5', 'ws_jqglscdriu4aulnk', 'owner@example.org', 'Owner', '', 'owner', 1796126248493124);


--
-- Data for Name: workspaces; Type: TABLE DATA; Schema: foundry_fixture_release_1; Owner: -
--

INSERT INTO foundry_fixture_release_1.workspaces VALUES ('ws_jqglscdriu4aulnk', 'Release one', 1796126248493124);


--
-- Name: events_cursor_seq; Type: SEQUENCE SET; Schema: foundry_fixture_release_1; Owner: -
--

SELECT pg_catalog.setval('foundry_fixture_release_1.events_cursor_seq', 30, false);


--
-- Name: event_horizons event_horizons_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.event_horizons
    ADD CONSTRAINT event_horizons_pkey PRIMARY KEY (resource_type, resource_id);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (cursor);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope_type, scope_id, key);


--
-- Name: objects objects_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.objects
    ADD CONSTRAINT objects_pkey PRIMARY KEY (kind, id);


--
-- Name: resource_versions resource_versions_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.resource_versions
    ADD CONSTRAINT resource_versions_pkey PRIMARY KEY (type, id, version);


--
-- Name: resources resources_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.resources
    ADD CONSTRAINT resources_pkey PRIMARY KEY (type, id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: tokens tokens_hash_key; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.tokens
    ADD CONSTRAINT tokens_hash_key UNIQUE (hash);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (id);


--
-- Name: users users_email_key; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.users
    ADD CONSTRAINT users_email_key UNIQUE (email);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: workspaces workspaces_pkey; Type: CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.workspaces
    ADD CONSTRAINT workspaces_pkey PRIMARY KEY (id);


--
-- Name: events_by_age; Type: INDEX; Schema: foundry_fixture_release_1; Owner: -
--

CREATE INDEX events_by_age ON foundry_fixture_release_1.events USING btree (at_us);


--
-- Name: events_by_resource; Type: INDEX; Schema: foundry_fixture_release_1; Owner: -
--

CREATE INDEX events_by_resource ON foundry_fixture_release_1.events USING btree (resource_type, resource_id, cursor);


--
-- Name: idempotency_keys_by_age; Type: INDEX; Schema: foundry_fixture_release_1; Owner: -
--

CREATE INDEX idempotency_keys_by_age ON foundry_fixture_release_1.idempotency_keys USING btree (created_us);


--
-- Name: objects_by_parent; Type: INDEX; Schema: foundry_fixture_release_1; Owner: -
--

CREATE INDEX objects_by_parent ON foundry_fixture_release_1.objects USING btree (workspace_id, kind, parent_id, id);


--
-- Name: resources_by_workspace; Type: INDEX; Schema: foundry_fixture_release_1; Owner: -
--

CREATE INDEX resources_by_workspace ON foundry_fixture_release_1.resources USING btree (workspace_id, type, id);


--
-- Name: objects objects_workspace_id_fkey; Type: FK CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.objects
    ADD CONSTRAINT objects_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES foundry_fixture_release_1.workspaces(id);


--
-- Name: resources resources_workspace_id_fkey; Type: FK CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.resources
    ADD CONSTRAINT resources_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES foundry_fixture_release_1.workspaces(id);


--
-- Name: tokens tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.tokens
    ADD CONSTRAINT tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES foundry_fixture_release_1.users(id);


--
-- Name: tokens tokens_workspace_id_fkey; Type: FK CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.tokens
    ADD CONSTRAINT tokens_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES foundry_fixture_release_1.workspaces(id);


--
-- Name: users users_workspace_id_fkey; Type: FK CONSTRAINT; Schema: foundry_fixture_release_1; Owner: -
--

ALTER TABLE ONLY foundry_fixture_release_1.users
    ADD CONSTRAINT users_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES foundry_fixture_release_1.workspaces(id);


--
-- PostgreSQL database dump complete
--

\unrestrict hxqTjwEtD2Tf86POBcLEc4DASiTYrhGtdzcoU9HB5CXnaLEetGRNaf8TIKBlueu


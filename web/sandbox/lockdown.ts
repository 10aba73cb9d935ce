// lockdown removes the ways out of the sandbox that its Content-Security-
// Policy does not close, before any app code runs: WebRTC (Chromium does
// not apply CSP to it), WebTransport, and nested frames, whose fresh
// window would bring those constructors back.

const networkGlobals = [
  "RTCPeerConnection",
  "webkitRTCPeerConnection",
  "mozRTCPeerConnection",
  "RTCDataChannel",
  "RTCRtpSender",
  "RTCRtpReceiver",
  "RTCRtpTransceiver",
  "RTCIceCandidate",
  "RTCIceTransport",
  "RTCDtlsTransport",
  "RTCSctpTransport",
  "RTCSessionDescription",
  "RTCCertificate",
  "RTCDTMFSender",
  "RTCEncodedAudioFrame",
  "RTCEncodedVideoFrame",
  "RTCRtpScriptTransform",
  "RTCError",
  "RTCErrorEvent",
  "RTCPeerConnectionIceEvent",
  "RTCPeerConnectionIceErrorEvent",
  "RTCDataChannelEvent",
  "RTCTrackEvent",
  "WebTransport",
  "WebTransportBidirectionalStream",
  "WebTransportDatagramDuplexStream",
  "WebTransportError",
  "PresentationRequest",
  "PresentationConnection",
  // Its documents are parsed out of reach of the checks below.
  "XSLTProcessor",
  // Workers are fresh realms of their own (with WebTransport and, in
  // some browsers, WebRTC): apps get none.
  "Worker",
  "SharedWorker",
  "ServiceWorker",
  "ServiceWorkerContainer",
];

// Elements that open a nested browsing context (a new window with its own,
// untouched globals).
const framing = new Set(["IFRAME", "FRAME", "FRAMESET", "OBJECT", "EMBED", "PORTAL", "FENCEDFRAME"]);

function seal(target: object, name: string, value: unknown) {
  try {
    delete (target as Record<string, unknown>)[name];
  } catch {
    // not configurable: overwritten below if writable
  }
  try {
    Object.defineProperty(target, name, { value, writable: false, configurable: false, enumerable: false });
  } catch {
    try {
      (target as Record<string, unknown>)[name] = value;
    } catch {
      // left as the browser made it; the policy still applies
    }
  }
}

function refuse(what: string): never {
  throw new DOMException(what + " is not available to apps in a Room: they run without network access.", "SecurityError");
}

const frameSelector = "iframe,frame,frameset,object,embed,portal,fencedframe";

// hasFrame reports whether node is, or holds, an element that would open a
// nested browsing context: in its subtree, in the content of any template
// in it (a declarative shadow root becomes live when parsed), and in any
// open shadow root.
function hasFrame(node: unknown, depth = 0): boolean {
  if (!(node instanceof Node)) return false;
  if (depth > 32) return true; // deeper than any app needs: refused
  if (node instanceof Element && framing.has(node.tagName.toUpperCase())) return true;
  if (!(node instanceof Element || node instanceof DocumentFragment || node instanceof Document)) return false;
  if (node.querySelector(frameSelector) !== null) return true;
  const inner: Node[] = [];
  if (node instanceof HTMLTemplateElement) inner.push(node.content);
  if (node instanceof Element && node.shadowRoot) inner.push(node.shadowRoot);
  node.querySelectorAll("*").forEach((el) => {
    if (el instanceof HTMLTemplateElement) inner.push(el.content);
    if (el.shadowRoot) inner.push(el.shadowRoot);
  });
  return inner.some((n) => hasFrame(n, depth + 1));
}

export function lockdown() {
  const g = globalThis as unknown as Record<string, unknown>;
  for (const name of networkGlobals) {
    const ctor = g[name];
    const proto = typeof ctor === "function" ? (ctor as { prototype?: object }).prototype : undefined;
    if (proto) {
      // A reference kept before this ran (there is none: nothing runs
      // before) would still find every method refusing.
      for (const key of Object.getOwnPropertyNames(proto)) {
        if (key === "constructor") continue;
        const d = Object.getOwnPropertyDescriptor(proto, key);
        if (d && typeof d.value === "function") seal(proto, key, () => refuse(name));
      }
    }
    seal(globalThis, name, undefined);
    if (Window.prototype && name in Window.prototype) seal(Window.prototype, name, undefined);
  }
  const nav = navigator as unknown as Record<string, unknown>;
  // A beacon is queued before the policy refuses it: it says false at once.
  seal(Navigator.prototype, "sendBeacon", () => false);
  for (const name of ["mediaDevices", "getUserMedia", "webkitGetUserMedia", "presentation", "serviceWorker", "credentials"]) {
    seal(Navigator.prototype, name, undefined);
    if (name in nav) seal(nav, name, undefined);
  }

  // Nested frames: no element that opens one can be made or put in the
  // document, and a frame's window is never handed out.
  const create = Document.prototype.createElement;
  seal(Document.prototype, "createElement", function (this: Document, tag: string, opts?: ElementCreationOptions) {
    if (framing.has(String(tag).toUpperCase())) refuse("A nested frame (" + String(tag).toLowerCase() + ")");
    return create.call(this, tag, opts);
  });
  const createNS = Document.prototype.createElementNS;
  seal(Document.prototype, "createElementNS", function (this: Document, ns: string | null, tag: string, opts?: ElementCreationOptions) {
    const local = String(tag).split(":").pop() ?? "";
    if (framing.has(local.toUpperCase())) refuse("A nested frame (" + local.toLowerCase() + ")");
    return createNS.call(this, ns, tag, opts as ElementCreationOptions);
  });
  const guardArgs = (proto: object, name: string) => {
    const orig = (proto as Record<string, unknown>)[name];
    if (typeof orig !== "function") return;
    seal(proto, name, function (this: unknown, ...args: unknown[]) {
      for (const a of args) if (hasFrame(a)) refuse("A nested frame");
      return (orig as (...a: unknown[]) => unknown).apply(this, args);
    });
  };
  for (const name of ["appendChild", "insertBefore", "replaceChild"]) guardArgs(Node.prototype, name);
  for (const name of ["append", "prepend", "before", "after", "replaceWith", "replaceChildren", "insertAdjacentElement", "moveBefore"]) guardArgs(Element.prototype, name);
  for (const name of ["before", "after", "replaceWith"]) {
    guardArgs(CharacterData.prototype, name);
    guardArgs(DocumentType.prototype, name);
  }
  for (const name of ["append", "prepend", "replaceChildren", "moveBefore"]) {
    guardArgs(DocumentFragment.prototype, name);
    guardArgs(Document.prototype, name);
  }
  guardArgs(Range.prototype, "insertNode");
  guardArgs(Range.prototype, "surroundContents");
  const importNode = Document.prototype.importNode;
  seal(Document.prototype, "importNode", function (this: Document, node: Node, deep?: boolean) {
    if (hasFrame(node)) refuse("A nested frame");
    return importNode.call(this, node, deep);
  });
  const adoptNode = Document.prototype.adoptNode;
  seal(Document.prototype, "adoptNode", function <T extends Node>(this: Document, node: T): T {
    if (hasFrame(node)) refuse("A nested frame");
    return adoptNode.call(this, node) as T;
  });

  // Markup parsed into the live document: parsed into a template first
  // (inert, no browsing context), refused if it holds a frame.
  const tpl = create.call(document, "template") as HTMLTemplateElement;
  const innerDesc = Object.getOwnPropertyDescriptor(Element.prototype, "innerHTML");
  const framed = (html: unknown) => {
    if (!innerDesc?.set) return true;
    innerDesc.set.call(tpl, String(html));
    const bad = hasFrame(tpl.content);
    innerDesc.set.call(tpl, "");
    return bad;
  };
  const guardSetter = (proto: object, name: string) => {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d || !d.set) return;
    const set = d.set;
    Object.defineProperty(proto, name, {
      configurable: false,
      enumerable: d.enumerable,
      get: d.get,
      set(this: unknown, v: unknown) {
        if (framed(v)) refuse("A nested frame");
        set.call(this, v);
      },
    });
  };
  guardSetter(Element.prototype, "innerHTML");
  guardSetter(Element.prototype, "outerHTML");
  guardSetter(ShadowRoot.prototype, "innerHTML");
  const guardHTML = (proto: object, name: string, at: number) => {
    const orig = (proto as Record<string, unknown>)[name];
    if (typeof orig !== "function") return;
    seal(proto, name, function (this: unknown, ...args: unknown[]) {
      if (framed(args[at])) refuse("A nested frame");
      return (orig as (...a: unknown[]) => unknown).apply(this, args);
    });
  };
  guardHTML(Element.prototype, "insertAdjacentHTML", 1);
  guardHTML(Element.prototype, "setHTMLUnsafe", 0);
  guardHTML(Element.prototype, "setHTML", 0);
  guardHTML(ShadowRoot.prototype, "setHTMLUnsafe", 0);
  guardHTML(Range.prototype, "createContextualFragment", 0);
  const exec = Document.prototype.execCommand;
  seal(Document.prototype, "execCommand", function (this: Document, cmd: string, ui?: boolean, value?: string) {
    const c = String(cmd).toLowerCase();
    if (c === "inserthtml" || c === "paste") refuse("document.execCommand(" + c + ")");
    return exec.call(this, cmd, ui, value);
  });
  seal(Document.prototype, "write", () => refuse("document.write"));
  seal(Document.prototype, "writeln", () => refuse("document.writeln"));
  seal(Document.prototype, "open", () => refuse("document.open"));
  for (const proto of [HTMLIFrameElement.prototype, HTMLObjectElement.prototype, HTMLEmbedElement.prototype]) {
    for (const name of ["contentWindow", "contentDocument", "getSVGDocument"]) {
      if (name in proto) seal(proto, name, name === "getSVGDocument" ? () => null : null);
    }
  }
  // Documents parsed apart from this one (inert, but their nodes could be
  // moved in): none may hold a frame at all.
  const guardResult = (target: object, name: string) => {
    const orig = (target as Record<string, unknown>)[name];
    if (typeof orig !== "function") return;
    seal(target, name, function (this: unknown, ...args: unknown[]) {
      const out = (orig as (...a: unknown[]) => unknown).apply(this, args);
      if (hasFrame(out)) refuse("A nested frame");
      return out;
    });
  };
  guardResult(DOMParser.prototype, "parseFromString");
  guardResult(Document, "parseHTMLUnsafe");
  guardResult(Document, "parseHTML");
  const bodyDesc = Object.getOwnPropertyDescriptor(Document.prototype, "body");
  if (bodyDesc?.set) {
    const setBody = bodyDesc.set;
    Object.defineProperty(Document.prototype, "body", {
      configurable: false,
      enumerable: bodyDesc.enumerable,
      get: bodyDesc.get,
      set(this: Document, v: unknown) {
        if (hasFrame(v)) refuse("A nested frame");
        setBody.call(this, v);
      },
    });
  }
  // Anything that still slips in (a path not thought of) is taken out as
  // soon as the document changes.
  new MutationObserver((records) => {
    for (const r of records) {
      r.addedNodes.forEach((n) => {
        if (n instanceof Element && framing.has(n.tagName.toUpperCase())) n.remove();
        else if (n instanceof Element) n.querySelectorAll(frameSelector).forEach((f) => f.remove());
      });
    }
  }).observe(document, { childList: true, subtree: true });
}

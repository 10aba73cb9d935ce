import { defineCustomElement } from "@revolist/revogrid/standalone/revo-grid.js";

// defineGrid defines RevoGrid's custom elements without their runtime
// styles. Each of its Stencil components carries its CSS as a static
// `style`, which Stencil would add to the page as a <style> element when
// the first one connects; the page's policy (style-src 'self') refuses
// inline styles, and those very stylesheets are already in the app's
// stylesheet (sheet.css imports them from the package). So each element
// class is defined with `style` taken away, and Stencil adds nothing.
export function defineGrid() {
  const registry = window.customElements;
  const define = registry.define;
  registry.define = function (name: string, ctor: CustomElementConstructor, options?: ElementDefinitionOptions) {
    Object.defineProperty(ctor, "style", { value: undefined, configurable: true });
    define.call(registry, name, ctor, options);
  };
  try {
    defineCustomElement();
  } finally {
    registry.define = define;
  }
}

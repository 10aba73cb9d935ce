import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";

const md = new MarkdownIt({ html: false, linkify: true });

// preview is markdown as sanitized HTML.
export const preview = (text: string): string => DOMPurify.sanitize(md.render(text));

// Answers come from the internet: render Markdown with raw HTML escaped and links and images
// shown as text, so nothing in an answer can load, navigate or run.
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.disable(['link', 'image', 'autolink']);

export function renderMarkdown(text: string): string {
  return md.render(text);
}

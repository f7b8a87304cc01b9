"""Pages for the web_fetch benchmarks, and a loopback server for them in its own process.

``article(size, seed)`` builds a deterministic article-like HTML page of about ``size`` bytes:
a head with style and script, a site header with navigation, an article (headings, paragraphs
with inline links and emphasis, lists, tables, quotes, figures), a sidebar, a comment block, a
footer and a trailing script, in the proportions of a news or blog page. The same size and seed
always give the same bytes.

Run as a script it serves, on every address given and one port, with HTTP/1.1 keep-alive:

* ``/robots.txt``: allows everything;
* ``/page/<size>/<seed>.html``: ``article(size, seed)`` as ``text/html; charset=utf-8``;
* ``/bomb``: the bytes of BOMB_FILE with ``Content-Encoding: gzip`` (a compression bomb).

usage: python bench/fetch_pages.py PORT BOMB_FILE|- HOST [HOST ...]
Prints "ready" on stdout once listening. Run it in its own process so that its CPU is not
counted as the measured process's.
"""

from __future__ import annotations

import asyncio
import random
import sys
import zlib
from pathlib import Path

_WORDS = (
    "tide harbour station sailor table morning evening current vessel channel pilot beacon "
    "chart depth survey coast river estuary bridge lock quay pier crane cargo freight route "
    "schedule weather forecast wind pressure front storm calm season winter summer spring "
    "autumn report council budget plan project study result measure method sample figure "
    "level rise fall average record history archive museum library school student teacher "
    "research paper review journal editor author reader question answer problem solution "
    "market price cost value trade export import growth decline change policy law court "
    "decision vote member committee agency office service network system energy power grid "
    "water supply demand storage battery solar turbine engine fuel carbon emission climate "
    "model data analysis signal noise error uncertainty estimate range trend pattern"
).split()
_NAV = ("Home", "World", "Business", "Science", "Climate", "Culture", "Sport", "Opinion")


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(3, 6)):
        sentence = _sentence(rng, rng.randint(8, 22))
        roll = rng.random()
        if roll < 0.25:
            word = rng.choice(_WORDS)
            sentence += f' See <a href="/topics/{word}?ref=body&amp;p=1">{word} coverage</a>.'
        elif roll < 0.4:
            sentence = f"<em>{sentence}</em>"
        elif roll < 0.5:
            sentence = f"<strong>{sentence}</strong>"
        parts.append(sentence)
    return "<p>" + " ".join(parts) + "</p>\n"


def _block(rng: random.Random, section: int) -> str:
    roll = rng.random()
    if roll < 0.12:
        items = "".join(f"<li>{_sentence(rng, rng.randint(4, 12))}</li>" for _ in range(5))
        return f"<ul>{items}</ul>\n"
    if roll < 0.18:
        head = "".join(f"<th>{rng.choice(_WORDS).title()}</th>" for _ in range(4))
        rows = "".join(
            "<tr>" + "".join(f"<td>{rng.randint(1, 9999)}</td>" for _ in range(4)) + "</tr>"
            for _ in range(6)
        )
        return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>\n'
    if roll < 0.22:
        return f"<blockquote><p>{_sentence(rng, 18)}</p></blockquote>\n"
    if roll < 0.26:
        return (
            f'<figure><img src="/img/{section}-{rng.randint(1, 99)}.jpg" alt="{_sentence(rng, 5)}"'
            f' width="800" height="450"><figcaption>{_sentence(rng, 9)}</figcaption></figure>\n'
        )
    if roll < 0.34:
        return f"<h3>{_sentence(rng, 5)[:-1]}</h3>\n{_paragraph(rng)}"
    return _paragraph(rng)


def article(size: int, seed: int) -> bytes:
    """A deterministic article-like page of about ``size`` bytes (within a few hundred)."""
    rng = random.Random(f"{size}/{seed}")
    title = _sentence(rng, 7)[:-1]
    nav = "".join(f'<li><a href="/{n.lower()}">{n}</a></li>' for n in _NAV)
    state = ",".join(f'"{rng.choice(_WORDS)}{i}":{rng.randint(0, 10**6)}' for i in range(40))
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title} | The Harbour Gazette</title>"
        f'<meta name="description" content="{_sentence(rng, 20)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/site.css">'
        "<style>.site-header{display:flex}.sidebar{width:300px}.ad{min-height:250px}"
        ".byline{color:#555}.data td{padding:4px}</style>"
        f"<script>window.__STATE__={{{state}}};</script></head>\n<body>\n"
        '<header class="site-header"><a class="logo" href="/">The Harbour Gazette</a>'
        f'<nav class="main-nav" aria-label="Main"><ul>{nav}</ul></nav>'
        '<form class="search" action="/search"><input name="q" placeholder="Search">'
        "<button>Search</button></form></header>\n"
        '<div class="layout"><main id="content"><article class="story">\n'
        f'<h1>{title}</h1><p class="byline">By {rng.choice(_WORDS).title()} '
        f"{rng.choice(_WORDS).title()}, 2 December 2026</p>\n"
    )
    related = "".join(
        f'<li><a href="/story/{rng.randint(1000, 9999)}">{_sentence(rng, 6)[:-1]}</a></li>'
        for _ in range(8)
    )
    comments = "".join(
        f'<li class="comment"><span class="user">{rng.choice(_WORDS)}{rng.randint(1, 99)}'
        f"</span><p>{_sentence(rng, 12)}</p></li>"
        for _ in range(6)
    )
    tail = (
        "</article></main>\n"
        f'<aside class="sidebar"><h3>Related stories</h3><ul>{related}</ul>'
        '<div class="ad" data-slot="side-1">Advertisement</div></aside></div>\n'
        f'<section class="comments"><h3>Comments</h3><ul>{comments}</ul></section>\n'
        '<footer class="site-footer"><p>&copy; 2026 The Harbour Gazette. All rights reserved.'
        '</p><ul><li><a href="/privacy">Privacy</a></li><li><a href="/terms">Terms</a></li>'
        '<li><a href="/contact">Contact</a></li></ul></footer>\n'
        '<script src="/static/app.js" defer></script></body></html>\n'
    )
    parts = [head]
    used = len(head) + len(tail)
    section = 0
    while used < size:
        section += 1
        chunk = f'<h2 id="section-{section}">{_sentence(rng, 6)[:-1]}</h2>\n'
        for _ in range(rng.randint(3, 7)):
            chunk += _block(rng, section)
        if used + len(chunk) > size and section > 1:
            # Fill the rest with paragraphs so the page lands close to the size asked for.
            while used < size - 300:
                paragraph = _paragraph(rng)
                if used + len(paragraph) > size:
                    break
                parts.append(paragraph)
                used += len(paragraph)
            break
        parts.append(chunk)
        used += len(chunk)
    parts.append(tail)
    return "".join(parts).encode("utf-8")


def gzip_bomb(path: Path, inflated: int = 1 << 30) -> Path:
    """Write (once) a gzip body of about 1 MiB that inflates to ``inflated`` bytes of HTML."""
    if path.exists():
        return path
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip wrapper
    chunk = b" " * (1 << 20)
    prefix = b"<!DOCTYPE html><html><head><title>bomb</title></head><body><p>"
    out = [squeeze.compress(prefix)]
    for _ in range((inflated - len(prefix)) // len(chunk)):
        out.append(squeeze.compress(chunk))
    out.append(squeeze.flush())
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"".join(out))
    tmp.replace(path)
    return path


ROBOTS = b"User-agent: *\nAllow: /\n"


def main() -> int:
    """Serve until killed."""
    port, bomb_file, hosts = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    bomb = Path(bomb_file).read_bytes() if bomb_file != "-" else b""
    cache: dict[str, bytes] = {}

    def answer(target: str) -> tuple[bytes, bytes]:
        path = target.split("?")[0]
        if path == "/robots.txt":
            return b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n", ROBOTS
        if path == "/bomb":
            return (
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                b"Content-Encoding: gzip\r\n",
                bomb,
            )
        parts = path.split("/")
        if len(parts) == 4 and parts[1] == "page" and parts[3].endswith(".html"):
            if path not in cache:
                cache[path] = article(int(parts[2]), int(parts[3][:-5]))
            return b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n", cache[path]
        return b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n", b"not found"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                target = line.split(b" ")[1].decode()
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass
                head, body = answer(target)
                writer.write(head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
                writer.write(body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def serve() -> None:
        server = await asyncio.start_server(handle, hosts, port, backlog=1024)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())

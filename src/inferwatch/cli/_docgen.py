"""The generated reference pages: every config field (from the config models) and every CLI ``--help``.

``python -m inferwatch.cli._docgen`` rewrites ``docs/reference/config.md`` and
``docs/reference/cli.md``; a test fails when the committed pages differ from what
this writes, so names, defaults and help texts can never drift from the code. It also
copies ``benchmarks/RESULTS.md`` to the site's ``docs/benchmarks/index.md`` (links
made relative to that page), so the two tables cannot differ, and writes the reference pages'
简体中文 twins (``docs/reference/*.zh.md``): the same tables and ``--help`` with the prose translated.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["benchmarks_index", "cli_reference", "config_reference", "config_sections", "write_pages",
           "zh_reference"]

CONFIG_PAGE = "docs/reference/config.md"
CLI_PAGE = "docs/reference/cli.md"
BENCH_SOURCE = "benchmarks/RESULTS.md"
BENCH_PAGE = "docs/benchmarks/index.md"
ZH = {  # the generated pages' 简体中文 twins: page -> (its translation's path, title and introduction)
    CONFIG_PAGE: ("docs/reference/config.zh.md", "# 配置参考", (
        "由 `python -m inferwatch.cli._docgen` 根据配置模型生成（有测试保证它与代码一致）："
        "`inferwatch.yaml` 接受的每个字段、其类型和默认值。时长写作 `30s`、`5m`、`1h30m`；"
        "大小写作 `10MB`；密钥显示为 `<secret>`。各部分和字段的说明取自配置模型，目前为英文。")),
    CLI_PAGE: ("docs/reference/cli.zh.md", "# 命令行参考", (
        "由 `python -m inferwatch.cli._docgen` 根据参数解析器生成（有测试保证它与代码一致）："
        "每个子命令的 `--help`（英文，与终端中显示的一致）。每个读取配置的子命令都接受 "
        "`--config FILE`；不给时依次使用 `$INFERWATCH_CONFIG`、当前目录下的 `./inferwatch.yaml`"
        "（如果有）、内置默认值。")),
    BENCH_PAGE: ("docs/benchmarks/index.zh.md", "# 基准测试结果", (
        "在项目的开发机上测量（2 核，24 GiB，无 GPU），每个基准测试在同一次运行中并排运行"
        " inferwatch 和其对照。用 `make bench`（全部）或 `make bench BENCH=<name>`（`benc"
        "hmarks/bench_<name>.py` 中的一个）重跑。\n\n每个领域一张表，每项测量取最新数据。**"
        "比值**（Ratio）是 inferwatch 的数据除以对照的：对时间、开销和大小，小于 1 表示更"
        "快或更小；对速率和得分，大于 1 表示更多。命令在仓库根目录下用项目的虚拟环境（`.v"
        "env/bin/python`）运行。多数运行中 2 个核心与其他任务共享，所以绝对时间在各次运行"
        "之间会浮动；在同一次运行内测得的比值才是可比较的数字。**测量于**（Measured）是记"
        "录该数据的日期和 commit。每个领域的每次运行（含完整输出、运行时的负载和尝试过的"
        "内容）都在该领域的页面上（链接在每张表下方）。\n\n本页由 `python -m inferwatch.cli"
        "._docgen` 从 `benchmarks/RESULTS.md` 生成：标题和表头为中文，表格各行和表下说明"
        "随每次测量更新，保留英文原文。")),
}
_ZH_TABLE = {"| field | type | default | description |": "| 字段 | 类型 | 默认值 | 说明 |",
             "| What | inferwatch | Peer | Ratio | Command | Measured |":
                 "| 测量项 | inferwatch | 对照 | 比值 | 命令 | 测量于 |"}
_ZH_TITLES = {"SDK overhead": "SDK 开销", "PromQL queries": "PromQL 查询", "Ingest": "写入",
              "Rules and notifications": "规则与通知", "Dynamic baselines on NAB": "NAB 上的动态基线",
              "Model quality and estimated performance": "模型质量与性能估计", "Model quality": "模型质量",
              "Edge agent": "边缘 agent", "Host and GPU collection": "主机与 GPU 采集", "Tracing": "链路追踪",
              "Dashboard": "控制台", "Hostile input, faults and load": "恶意输入、故障与负载"}
_HISTORY = re.compile(r"History:(\s*)\[([^\]]*), every run\]")
HELP_COLUMNS = "100"  # argparse wraps --help to the terminal: a fixed width keeps the page stable


def _models_in(annotation: Any) -> list[type]:
    """The pydantic model classes inside a field's type (through Optional, tuple, Annotated, unions)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type] = []
    for arg in typing.get_args(annotation):
        for model in _models_in(arg):
            if model not in found:
                found.append(model)
    return found


def _is_sequence(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_sequence(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_is_sequence(a) for a in typing.get_args(annotation))
    return origin in (tuple, list)


def config_sections() -> list[tuple[str, type]]:
    """Every (YAML path, model) reachable from the root config, depth first; each model once, where it
    first appears (the receivers' shared ``rate_limit`` model is documented under the first receiver)."""
    from inferwatch.config import Config

    seen: dict[type, str] = {}
    _sections("", Config, seen)
    return [(path, model) for model, path in seen.items()]


def _sections(path: str, model: type, seen: dict[type, str]) -> None:
    if model in seen:
        return
    seen[model] = path
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        models = _models_in(field.annotation)
        key = f"{path}.{field.alias or name}".lstrip(".") + ("[]" if _is_sequence(field.annotation) else "")
        for sub in models:
            kind = sub.model_fields.get("type")  # type: ignore[attr-defined]
            tag = f" (type: {kind.default})" if len(models) > 1 and kind is not None else ""
            if len(models) > 1 and not tag:
                tag = f" ({sub.__name__})"
            _sections(key + tag, sub, seen)


def _type_name(annotation: Any, metadata: list[Any], where: dict[type, str]) -> str:
    """A reader's name for a field's type; a model is named by the section that documents it."""
    for meta in metadata:
        func = getattr(meta, "func", None)
        if getattr(func, "__name__", "") == "format_duration":
            return "duration"
        if getattr(func, "__name__", "") == "_to_bytes":
            return "size"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0], list(args[1:]), where)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a, [], where) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(names)) + (" or null" if type(None) in args else "")
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (tuple, list):
        return f"list of {_type_name(args[0], [], where)}" if args else "list"
    if origin is dict:
        return f"map of {_type_name(args[1], [], where)}" if len(args) == 2 else "map"
    if annotation in where:
        return f"section `{where[annotation] or '(top level)'}`"
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
            annotation.__name__, annotation.__name__)
    return str(annotation).replace("typing.", "")


def _default(field: Any) -> str:
    from pydantic import BaseModel, TypeAdapter

    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(section)"
    if isinstance(value, tuple) and value and all(isinstance(v, BaseModel) for v in value):
        return f"{len(value)} entries"
    try:
        kind: Any = field.annotation
        if field.metadata:
            kind = typing.Annotated[kind, *field.metadata]
        shown = TypeAdapter(kind).dump_python(value, mode="json")
    except Exception:  # a type TypeAdapter cannot dump: its repr (the page still names the field)
        shown = repr(value)
    return "`" + json.dumps(shown, ensure_ascii=False).replace("|", "\\|") + "`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def config_reference() -> str:
    """The config reference page: one table per section, a row per field (type, default, meaning)."""
    out = ["# Configuration reference", "",
           "Generated from the config models by `python -m inferwatch.cli._docgen` (a test keeps it",
           "current): every field `inferwatch.yaml` accepts, its type and its default. Durations are",
           "written `30s`, `5m`, `1h30m`; sizes `10MB`; secrets print as `<secret>`.", ""]
    sections = config_sections()
    where = {model: path for path, model in sections}
    for path, model in sections:
        doc = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
        out += [f"## `{path or '(top level)'}`", "", _cell(doc), "",
                "| field | type | default | description |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            kind = _cell(_type_name(field.annotation, field.metadata, where))
            about = _cell(field.description or "")
            out.append(f"| `{field.alias or name}` | {kind} | {_default(field)} | {about} |")
        out.append("")
    return "\n".join(out)


def _parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*words, name))


def cli_reference() -> str:
    """The CLI reference page: ``inferwatch VERB ... --help`` for every verb and action."""
    from inferwatch.cli._main import build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        out = ["# Command-line reference", "",
               "Generated from the parsers by `python -m inferwatch.cli._docgen` (a test keeps it",
               "current): the `--help` of every verb. Every verb that reads a config takes",
               "`--config FILE`; without it, `$INFERWATCH_CONFIG`, else `./inferwatch.yaml` when",
               "there is one, else the built-in defaults.", ""]
        for words, parser in _parsers(build_parser()):
            title = " ".join(("inferwatch", *words))
            out += [f"## `{title}`", "", "```", parser.format_help().rstrip(), "```", ""]
        return "\n".join(out)
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def _anchor(title: str) -> str:
    """The anchor Python-Markdown's toc gives a heading (its text without code marks and punctuation)."""
    text = re.sub(r"[^\w\s-]", "", title.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def zh_reference(page: str, english: str) -> str:
    """The 简体中文 twin of a generated reference page: its title and introduction translated, the
    tables' header rows and the benchmark areas' names too, each heading keeping the English page's
    anchor; blocks and table rows as they are."""
    _, title, intro = ZH[page]
    lines = english.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("## "))
    out, fenced = [title, "", intro, ""], False
    for line in lines[first:]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            line = f"## {_ZH_TITLES.get(line[3:], line[3:])} {{#{_anchor(line[3:])}}}"
        out.append(line if fenced else _ZH_TABLE.get(line, line))
    return _HISTORY.sub(lambda m: "历次运行：" + ("\n" if "\n" in m.group(1) else "")
                        + f"[{_ZH_TITLES.get(m.group(2), m.group(2))}]", "\n".join(out))


def benchmarks_index(root: Path) -> str:
    """The site's benchmarks page: ``root``'s benchmarks/RESULTS.md, its links relative to the page."""
    text = (root / BENCH_SOURCE).read_text(encoding="utf-8")
    # RESULTS.md links the history pages as ../docs/benchmarks/X.md; the copy sits beside them
    text = text.replace("](../docs/benchmarks/", "](").replace("](../docs/", "](../")
    note = f"<!-- generated from {BENCH_SOURCE} by python -m inferwatch.cli._docgen: edit that file -->"
    return f"{note}\n{text}"


_FENCE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```[ \t]*$", re.S | re.M)


def sync_translations(root: Path) -> list[Path]:
    """Copy each English page's fenced blocks into its translation (``docs/PAGE.zh.md``), in order.

    Code, config and output are the same in every language; only the prose is translated.
    A translation whose number of blocks differs from its page's is left alone (and named by
    ``tests/test_docs_zh.py``). Returns the files that changed.
    """
    changed = []
    for zh in sorted((root / "docs").rglob("*.zh.md")):
        english = zh.with_name(zh.name.removesuffix(".zh.md") + ".md")
        if not english.is_file():
            continue
        blocks = _FENCE.findall(english.read_text(encoding="utf-8"))
        text = zh.read_text(encoding="utf-8")
        if len(_FENCE.findall(text)) != len(blocks):
            continue
        parts = _FENCE.split(text)  # prose between the blocks, len(blocks) + 1 pieces
        synced = "".join(p + b for p, b in zip(parts, [*blocks, ""], strict=True))
        if synced != text:
            zh.write_text(synced, encoding="utf-8")
            changed.append(zh)
    return changed


def write_pages(root: Path) -> list[Path]:
    """Write the generated pages under ``root`` (the repository) and sync the translations' code
    blocks; return the paths written."""
    written = sync_translations(root)
    pages = [(CONFIG_PAGE, config_reference()), (CLI_PAGE, cli_reference()),
             (BENCH_PAGE, benchmarks_index(root))]  # their 简体中文 twins follow
    pages += [(ZH[rel][0], zh_reference(rel, text)) for rel, text in pages if rel in ZH]
    for rel, text in pages:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover
    for page in write_pages(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
        print(f"wrote {page}")

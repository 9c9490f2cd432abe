"""The Go template subset of Alertmanager's message fields, rendered as the real Alertmanager 0.25
renders it: each template below goes through ``amtool template render`` (Alertmanager's own template
code) and through inferwatch, on the same data; what lies outside the subset is refused at parse."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests._require import require_tool

from inferwatch.settings._gotemplate import GoTemplate, GoTemplateError, template_data

DATA = {
    "receiver": "team-x", "status": "firing", "externalURL": "http://am.example",
    "groupLabels": {"alertname": "Slow"}, "commonLabels": {"alertname": "Slow", "team": "db"},
    "commonAnnotations": {"summary": "slow <b>queries</b>"},
    "alerts": [
        {"status": "firing", "labels": {"alertname": "Slow", "team": "db", "instance": "h1:9100"},
         "annotations": {"summary": "slow <b>queries</b>", "value": "0.93"},
         "startsAt": "2026-12-07T04:22:00.215Z", "endsAt": "0001-01-01T00:00:00Z",
         "generatorURL": "http://prom/g", "fingerprint": "abc"},
        {"status": "resolved", "labels": {"alertname": "Slow", "team": "db", "instance": "h2:9100"},
         "annotations": {"summary": "slow <b>queries</b>"}, "startsAt": "2026-12-07T04:20:00Z",
         "endsAt": "2026-12-07T04:25:00Z", "generatorURL": "", "fingerprint": "def"},
    ],
}

TEMPLATES = [
    "{{ .CommonLabels.alertname }} on {{ .CommonLabels.team }}",
    "[{{ .Status | toUpper }}:{{ .Alerts.Firing | len }}] {{ .GroupLabels.SortedPairs.Values | join \" \" }}",
    "{{ range .Alerts }}{{ .Labels.instance }} {{ .Status }}\n{{ end }}",
    "{{ range .Alerts.Firing }}* {{ .Annotations.summary }} ({{ .Annotations.value }}){{ end }}",
    "{{ range .Alerts.Resolved }}{{ .Labels.instance }} ended {{ .EndsAt }}{{ end }}",
    "{{- if eq .Status \"firing\" -}}\n  FIRING\n{{- else -}}\n  OK\n{{- end }}!",
    "{{ if gt (len .Alerts.Firing) 1 }}many{{ else if eq (len .Alerts.Firing) 1 }}one{{ else }}none{{ end }}",
    "{{ with .CommonAnnotations.summary }}{{ . | safeHtml }}{{ end }}",
    "{{ with .CommonLabels.nope }}set{{ else }}unset{{ end }}:{{ .CommonLabels.nope }}:",
    "{{ join \", \" .CommonLabels.Names }} / {{ join \", \" .CommonLabels.Values }}",
    "{{ range .CommonLabels.SortedPairs }}{{ .Name }}={{ .Value }};{{ end }}",
    "{{ reReplaceAll \"(.+):(\\\\d+)\" \"$1 port ${2}\" (index .Alerts 0).Labels.instance }}",
    "{{ printf \"%s: %d alerts, %.1f%%\" .Receiver (len .Alerts) 93.25 }} {{ printf \"%q\" .Status }}",
    "{{ title \"disk almost full\" }} {{ toLower \"ABC\" }} {{ stringSlice \"a\" \"b\" }}",
    "{{ if and .Alerts (not .CommonLabels.nope) }}a{{ end }}"
    "{{ if or .CommonLabels.nope .Receiver }}b{{ end }}",
    "{{ if match \"^h[0-9]\" (index .Alerts 1).Labels.instance }}host{{ end }}",
    "{{ index .CommonLabels \"team\" }} {{ (index .Alerts 0).StartsAt }} {{ .ExternalURL }}",
    "{{/* a comment */}}{{ .CommonLabels }} {{ .Alerts.Firing }}",
    "{{ range $.Alerts }}{{ $.Receiver }}{{ end }}",
    "{{ print 1 2 \"x\" }} {{ println \"y\" }}{{ 1.5 }} {{ true }} {{ len \"abc\" }}",
]


@pytest.fixture(scope="module")
def amtool(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    binary = require_tool("amtool", "amtool")  # Alertmanager's own template code is the oracle
    tmp = tmp_path_factory.mktemp("gotemplate")
    (tmp / "empty.tmpl").write_text("")
    (tmp / "data.json").write_text(json.dumps(DATA))
    return binary, tmp / "empty.tmpl", tmp / "data.json"


@pytest.mark.parametrize("text", TEMPLATES)
def test_renders_what_alertmanager_renders(amtool: tuple[str, Path, Path], text: str) -> None:
    binary, glob, data = amtool
    done = subprocess.run([binary, "template", "render", f"--template.glob={glob}", f"--template.data={data}",
                           f"--template.text={text}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # amtool prints the text trimmed, then a newline: compared trimmed
    assert GoTemplate(text).render(template_data(DATA)).strip() == done.stdout.strip()


# a templates: file as a team writes one: its text outside definitions is never output
LIBRARY = """\
Text outside a definition is the file's own template, never run.
{{ define "team.title" }}[{{ .Status | toUpper }}{{ if eq .Status "firing" }}:\
{{ .Alerts.Firing | len }}{{ end }}] \
{{ .GroupLabels.SortedPairs.Values | join " " }}{{ end }}
{{ define "team.alert" }}- {{ .Labels.instance }}: {{ .Annotations.summary }}{{ end }}
{{ define "team.text" }}{{ range .Alerts }}{{ template "team.alert" . }}
{{ end }}{{ end }}
{{ define "team.host" }}{{ reReplaceAll ":.*" "" . }}{{ end }}
{{ define "team.overridden" }}first{{ end }}
"""
OVERRIDE = '{{ define "team.overridden" }}second{{ end }}'  # a later file replaces a definition

LIBRARY_TEMPLATES = [
    '{{ template "team.title" . }}',
    '{{ template "team.title" . }}\n{{ template "team.text" . }}',
    '{{ range .Alerts }}{{ template "team.host" .Labels.instance }};{{ end }}',
    '{{ template "team.overridden" }}|{{ template "team.alert" (index .Alerts 1) }}',
    '{{ block "team.block" .CommonLabels }}team {{ .team }}{{ end }} / '
    '{{ template "team.block" .GroupLabels }}',
    '{{ define "team.inline" }}{{ .Receiver }}{{ end }}to {{ template "team.inline" . }}',
]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gotemplate_lib")
    (path / "a.tmpl").write_text(LIBRARY)
    (path / "b.tmpl").write_text(OVERRIDE)
    return path / "*.tmpl"


@pytest.mark.parametrize("text", LIBRARY_TEMPLATES)
def test_define_and_template_render_what_alertmanager_renders(
        amtool: tuple[str, Path, Path], library: Path, text: str) -> None:
    # the templates: file given to amtool as the glob, to inferwatch as the library
    binary, _, data = amtool
    done = subprocess.run([binary, "template", "render", f"--template.glob={library}",
                           f"--template.data={data}", f"--template.text={text}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = GoTemplate(text, [LIBRARY, OVERRIDE]).render(template_data(DATA))
    assert got.strip() == done.stdout.strip()
    assert "outside a definition" not in got


def test_a_name_defined_twice_in_one_text_is_refused_as_go_does() -> None:
    with pytest.raises(GoTemplateError, match='multiple definition of template "x"'):
        GoTemplate("", ['{{ define "x" }}1{{ end }}{{ define "x" }}2{{ end }}'])


def test_template_calls_are_bounded() -> None:
    loop = '{{ define "a" }}{{ template "a" . }}{{ end }}'
    with pytest.raises(GoTemplateError, match="nested more than 100 deep"):
        GoTemplate('{{ template "a" . }}', [loop]).render(template_data(DATA))


@pytest.mark.parametrize(("text", "construct"), [
    ('{{ if .Status }}{{ define "x" }}hi{{ end }}{{ end }}', "only at the top level"),
    ('{{ template "slack.default.text" . }}', 'template "slack.default.text" is not defined'),
    ("{{ template x . }}", "needs a template name in quotes"),
    ("{{ $x := .Status }}{{ $x }}", "variables"),
    ("{{ range $i, $a := .Alerts }}{{ end }}", "variables"),
    ("{{ humanizeDuration 3 }}", "'humanizeDuration'"),
    ("{{ if .Status }}open", "missing '{{ end }}'"),
    ("{{ end }}", "unexpected"),
    ("{{ (len .Alerts }}", "unbalanced"),
])
def test_what_lies_outside_the_subset_is_refused_naming_the_construct(text: str, construct: str) -> None:
    with pytest.raises(GoTemplateError, match=construct.replace("{", r"\{").replace("$", r"\$")
                       .replace("(", r"\(").replace("'", "'")):
        GoTemplate(text)

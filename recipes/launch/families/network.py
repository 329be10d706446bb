"""Commands that fetch or reach elsewhere: curl, wget, the Hugging Face CLI, rclone, ssh, scp, rsync,
gh, and git (clone, checkout, apply, ... in `-C DIR`)."""
from __future__ import annotations

import posixpath
import re

from ..effects import CommandEffects, Copy, Download, Write
from ..options import opts, parse, respelled, under
from ..words import Unknown, Word
from .common import _joined_text, _names, _only_git, _pure, _subcommands, _tree_copy, _Unknown


def _curl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`curl URL... [-o FILE | -O] [--output-dir DIR]`: downloads each URL to its file (standard
    output without one); `-K` config files and upload forms are not interpreted."""
    p = parse(args, _CURL)
    if p.values("-K", "--config"):
        raise _Unknown("options from a config file (`-K`)")
    urls = p.operands + p.values("--url")
    outputs = p.values("-o", "--output")
    folder = p.last("--output-dir")
    base = under(folder, cwd) if folder is not None else cwd
    remote_name = p.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name")
    out = CommandEffects(reads=[under(f[1:], cwd) for f in p.values("-d", "--data", "--data-binary", "--data-raw",
                                                                     "--json", "-T", "--upload-file", "-F", "--form")
                                if isinstance(f, str) and f.startswith("@")])
    for k, url in enumerate(urls):
        dest: Word | None = None
        if k < len(outputs):
            dest = under(outputs[k], base) if outputs[k] != "-" else None
        elif remote_name:
            dest = under(_url_basename(url), base)
        out.downloads.append(Download(url, dest))
        if dest is not None:
            out.writes.append(Write(dest, "download"))
    for jar in p.values("-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr"):
        if jar not in ("-", "/dev/null"):
            out.writes.append(Write(under(jar, cwd), "create"))
    return out


_CURL = opts(
    "-s -S -L -f -k -v -I -G -O -J -N -g -i -# -q -Z -4 -6 --tlsv1.2 --tlsv1.3 --ssl-reqd --silent --show-error "
    "--location --fail --fail-with-body "
    "--insecure --verbose --head --get --remote-name --remote-name-all --remote-header-name --compressed --no-buffer "
    "--create-dirs --retry-all-errors --retry-connrefused --http1.1 --http2 --globoff --include --progress-bar "
    "--no-progress-meter --parallel --fail-early --ssl-no-revoke --raw --tcp-nodelay --no-keepalive --ipv4 --ipv6",
    valued="-o -X -H -d -u -m -w -A -e -b -c -D -x -T -F -K -r -y -Y -C --output --output-dir --request --header "
           "--data --data-raw --data-binary --data-urlencode --json --user --max-time --connect-timeout --retry "
           "--retry-delay --retry-max-time --write-out --user-agent --referer --cookie --cookie-jar --dump-header "
           "--proxy --noproxy --proto --proto-redir --upload-file --form --config --range --url --cacert --cert --key "
           "--resolve "
           "--limit-rate --max-filesize --trace --trace-ascii --stderr --unix-socket --oauth2-bearer")


def _url_basename(url: Word) -> Word:
    if isinstance(url, Unknown):
        return Unknown(f"the file named by an unknown URL ({url.why})")
    name = url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return name or Unknown(f"the file named by {url}")


def _wget(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`wget URL... [-O FILE | -P DIR]`: downloads each URL (to FILE, into DIR, or here)."""
    p = parse(respelled(args, _WGET_LONG), opts(
        "-q -v -c -N -r -k -p -x --quiet --verbose --no-verbose --continue --timestamping "
        "--recursive --no-check-certificate --no-clobber --no-parent --show-progress --mirror -m "
        "--content-disposition --trust-server-names --no-host-directories --no-directories --force-directories "
        "--server-response -S",
        valued="-O -P -o -a -t -T -i -U -e -l -A -R --output-document --directory-prefix --output-file "
               "--append-output --tries --timeout --input-file --user-agent --header --user --password "
               "--http-user --http-password --execute --level --accept --reject --limit-rate --wait --post-data "
               "--post-file --read-timeout --connect-timeout --progress --cut-dirs --max-redirect"))
    if p.values("-e", "--execute"):
        raise _Unknown("wgetrc commands (`-e`)")
    urls = list(p.operands) + [Unknown(f"URLs listed in {_names([f])[0]}") for f in p.values("-i", "--input-file")]
    document = p.last("-O", "--output-document")
    folder = p.last("-P", "--directory-prefix")
    base = under(folder, cwd) if folder is not None else cwd
    out = CommandEffects(reads=[under(f, cwd) for f in p.values("-i", "--input-file", "--post-file")])
    recursive = p.has("-r", "--recursive", "-m", "--mirror")
    for url in urls:
        if document is not None:
            dest: Word | None = under(document, cwd) if document != "-" else None
        elif recursive:
            dest = base if base is not None else "."
        else:
            dest = under(_url_basename(url), base)
        out.downloads.append(Download(url, dest))
        if dest is not None:
            out.writes.append(Write(dest, "download"))
    out.writes += [Write(under(f, cwd), "append") for f in p.values("-o", "--output-file", "-a", "--append-output")]
    return out


_WGET_LONG = {"-nv": "--no-verbose", "-nc": "--no-clobber", "-np": "--no-parent", "-nd": "--no-directories",
              "-nH": "--no-host-directories"}


def _hf_download(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`hf download REPO [FILES] [--local-dir DIR] [--cache-dir DIR]`: fetches from the Hub into
    DIR, or into the Hugging Face cache (HF_HUB_CACHE, unknown here)."""
    p = parse(args, opts("--quiet --force-download --resume-download --dry-run --no-progress",
                         valued="--local-dir --cache-dir --revision --token --include --exclude --repo-type "
                                "--max-workers --local-dir-use-symlinks --format"))
    if not p.operands:
        raise _Unknown("no repository")
    repo = p.operands[0]
    url = f"hf://{repo}" if isinstance(repo, str) else Unknown(f"a Hub repository ({repo.why})")
    folder = p.last("--local-dir") or p.last("--cache-dir")
    dest = under(folder, cwd) if folder is not None else Unknown("the Hugging Face cache (HF_HUB_CACHE)")
    if p.has("--dry-run"):
        return CommandEffects()
    return CommandEffects(downloads=[Download(url, dest)], writes=[Write(dest, "download")])


def _hf_upload(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("--private --quiet --create-pr", valued="--token --repo-type --revision --include "
                                                                 "--exclude --commit-message --delete"))
    return CommandEffects(reads=[under(f, cwd) for f in p.operands[1:2]])


_HF = _subcommands({
    "download": _hf_download, "upload": _hf_upload, "login": _pure(), "logout": _pure(), "whoami": _pure(),
    "env": _pure(), "version": _pure(), "scan-cache": _pure(), "repo": _pure(), "auth": _pure(),
    "delete-cache": lambda name, args, cwd: CommandEffects(
        writes=[Write(Unknown("the Hugging Face cache (HF_HUB_CACHE)"), "delete")]),
    "cache": _pure(),
})


def _rclone(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`rclone copy|sync|copyto|move SRC DST`: a `remote:path` source is a download into DST."""
    p = parse(args, opts("-P -v -q --progress --verbose --quiet --no-traverse --checksum --fast-list --ignore-existing "
                         "--dry-run --create-empty-src-dirs -L --copy-links",
                         valued="--transfers --checkers --config --include --exclude --filter --log-file --retries "
                                "--multi-thread-streams --s3-chunk-size --max-age --min-age --bwlimit --log-level"))
    if not p.operands:
        raise _Unknown("no subcommand")
    sub, rest = p.operands[0], p.operands[1:]
    if sub in ("ls", "lsf", "lsd", "lsl", "size", "about", "version", "listremotes", "config", "check", "cat"):
        return CommandEffects()
    if sub not in ("copy", "copyto", "sync", "move", "moveto") or len(rest) != 2:
        raise _Unknown(f"`{_names([sub])[0]}` with {len(rest)} operands is not in the vocabulary")
    return _transfer(rest, cwd, _RCLONE_REMOTE)


def _ssh(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`ssh [opts] HOST [TEXT...]`: runs the words, joined by spaces, as shell text on HOST."""
    p = parse(args, opts("-A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -v -V -X -x -Y -4 -6",
                         valued="-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w", stop=True))
    if not p.operands:
        raise _Unknown("no host")
    words = p.operands[1:]
    if not words or p.has("-N"):
        return CommandEffects()
    return _joined_text(words)


def _scp(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`scp [opts] SRC... DST`: a `host:path` source is a download into DST."""
    p = parse(args, opts("-r -p -q -C -v -B -3 -4 -6 -O -T", valued="-P -i -o -F -l -c -J -S"))
    return _transfer(p.operands, cwd, _HOST_PATH)


def _transfer(operands: list[Word], cwd: Word | None, remote: re.Pattern[str]) -> CommandEffects:
    """`SRC... DST` of scp, rsync, rclone and bucket copies: a `remote` source (`host:path`,
    `name:path`, `s3://...`) is a download into DST, a `remote` destination an upload (only reads
    here), local to local a copy."""
    if len(operands) < 2:
        raise _Unknown("no destination")
    *sources, dst = operands
    if isinstance(dst, str) and remote.match(dst):
        return CommandEffects(reads=[under(s, cwd) for s in sources])
    dest = under(dst, cwd)
    fetched = any(isinstance(s, Unknown) or remote.match(s) for s in sources)
    out = CommandEffects(writes=[Write(dest, "download" if fetched else "copy")])
    for s in sources:
        if isinstance(s, Unknown) or remote.match(s):
            out.downloads.append(Download(s, dest))
        else:
            out.reads.append(under(s, cwd))
    return out


_HOST_PATH = re.compile(r"^(?:[^/:]+@)?[^/:]+:")
_RCLONE_REMOTE = re.compile(r"^[A-Za-z0-9_-]+:")
_BUCKET = re.compile(r"^(?:s3|gs)://")


def _rsync(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -r -v -z -P -h -q -u -l -L -p -t -o -g -D -H -A -X -c -n -W -x -R --archive "
                         "--recursive --verbose --compress --progress --partial --delete --delete-after "
                         "--delete-before --quiet --update --checksum --dry-run --inplace --ignore-existing "
                         "--human-readable --links --copy-links --no-perms --no-owner --no-group --times "
                         "--remove-source-files --mkpath --delete-excluded",
                         valued="-e --rsh --exclude --include --exclude-from --include-from --filter --chmod "
                                "--chown --timeout --bwlimit --log-file --rsync-path --files-from --info "
                                "--backup-dir --suffix"))
    if p.values("-e", "--rsh", "--rsync-path"):
        raise _Unknown("a remote shell command (`-e`, `--rsync-path`)")
    out = _transfer(p.operands, cwd, _HOST_PATH) if len(p.operands) >= 2 else CommandEffects()
    if len(p.operands) == 2 and out.writes and out.writes[0].how == "copy" and p.has("-a", "-r", "--archive",
                                                                                      "--recursive") \
            and not p.has("-R", "--relative") and _only_git(p.values("--exclude")) \
            and not p.values("--include", "--exclude-from", "--include-from", "--filter", "--files-from"):
        # `rsync -a SRC/ DEST`: SRC's files land in DEST; `rsync -a SRC DEST`: in DEST/SRC.
        source, dest = p.operands[0], out.writes[0].path
        if isinstance(source, str) and not source.endswith(("/", "/.")) and source != ".":
            if not isinstance(dest, str) or posixpath.basename(source) in ("", ".."):
                return out
            dest = posixpath.join(dest, posixpath.basename(source))
        out.copies = [_tree_copy(under(source, cwd), dest)]
    return out


def _gh(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    if len(args) >= 2 and args[1] == "download" and args[0] in ("release", "run"):
        return CommandEffects(downloads=[Download(Unknown(f"a GitHub {args[0]}'s files"), cwd)],
                              writes=[Write(cwd if cwd is not None else ".", "download")])
    if args and args[0] in ("api", "pr", "issue", "run", "release", "auth", "repo", "workflow", "label", "search"):
        if args[0] in ("pr", "repo") and len(args) > 1 and args[1] in ("checkout", "clone"):
            return CommandEffects(writes=[Write(cwd if cwd is not None else ".", "checkout")],
                                  downloads=[Download(Unknown("a GitHub repository"), cwd)])
        return CommandEffects()
    raise _Unknown("a `gh` command that is not in the vocabulary")


_GIT_GLOBAL = opts("--no-pager -p --paginate --bare --no-replace-objects --literal-pathspecs --no-optional-locks "
                   "-P --version --help", valued="-C -c --git-dir --work-tree --namespace --exec-path",
                   stop=True)


# Configuration a `git -c` / `git config` may set without changing what git runs or fetches
# (hooks, aliases, pagers, ssh, credential and fsmonitor commands are programs it would run;
# `url.*.insteadOf` and submodule URLs change where it fetches from).
_GIT_SAFE_CONFIG = re.compile(r"^(?:safe\.directory|user\.\w+|advice\.\w+|http\.(?:sslVerify|postBuffer|version)|"
                              r"protocol\.version|init\.defaultBranch|"
                              r"core\.(?:autocrlf|filemode|longpaths|compression)|pull\.rebase|color\.\w+|gc\.auto)$",
                              re.I)


_GIT_READS = frozenset("""
status log diff show rev-parse describe ls-files ls-remote ls-tree cat-file blame shortlog rev-list merge-base
version help grep var for-each-ref show-ref reflog count-objects fsck name-rev whatchanged cherry diff-tree
diff-index diff-files check-ignore check-attr verify-commit verify-tag format-patch hash-object push
""".split())


_GIT_CHECKOUTS = frozenset("""
checkout switch reset restore stash cherry-pick merge rebase revert clean rm mv am pull submodule worktree
sparse-checkout lfs
""".split())


_GIT_METADATA = frozenset("add commit fetch init tag branch remote gc prune notes update-index update-ref "
                          "symbolic-ref repack maintenance".split())


def _git(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """git with `-C DIR` (each resolved against the last): what a subcommand changes in the
    repository's work tree ("checkout"/"in-place edit") or only in its `.git`."""
    p = parse(args, _GIT_GLOBAL)
    repo: Word | None = cwd
    for folder in p.values("-C"):
        repo = under(folder, repo)
    work_tree = p.last("--work-tree")
    if work_tree is not None:
        repo = under(work_tree, repo)
    for setting in p.values("-c"):
        _git_config_safe(setting)
    if not p.operands:
        return CommandEffects()
    sub, rest = p.operands[0], p.operands[1:]
    if isinstance(sub, Unknown):
        raise _Unknown(f"an unknown subcommand ({sub.why})")
    here = repo if repo is not None else "."
    if sub == "clone":
        return _git_clone(rest, repo)
    if sub == "apply":
        return _git_apply(rest, repo)
    if sub == "config":
        return _git_config(rest, here)
    if sub == "archive":
        out_files = [w[len("--output="):] for w in rest if isinstance(w, str) and w.startswith("--output=")]
        out_files += [rest[k + 1] for k, w in enumerate(rest[:-1]) if w in ("-o", "--output")]
        return CommandEffects(reads=[here], writes=[Write(under(f, cwd), "create") for f in out_files])
    if sub in _GIT_READS:
        written = [w.split("=", 1)[1] for w in rest if isinstance(w, str) and w.startswith("--output=")]
        written += [rest[k + 1] for k, w in enumerate(rest[:-1]) if w == "--output"]
        if sub == "format-patch":
            folder = next((rest[k + 1] for k, w in enumerate(rest[:-1]) if w in ("-o", "--output-directory")), ".")
            written.append(under(folder, here))
        return CommandEffects(reads=[here], writes=[Write(under(f, cwd), "create") for f in written])
    if sub in _GIT_CHECKOUTS:
        out = CommandEffects(reads=[here], writes=[Write(here, "checkout")])
        if sub in ("pull", "submodule", "lfs"):
            out.downloads.append(Download(Unknown("the repository's remote"), here))
        if sub in ("am",):
            out.reads += [under(f, cwd) for f in rest if isinstance(f, str) and not f.startswith("-")]
        return out
    if sub in _GIT_METADATA:
        out = CommandEffects(reads=[here], writes=[Write(under(".git", here), "in-place edit")])
        if sub == "fetch":
            out.downloads.append(Download(Unknown("the repository's remote"), under(".git", here)))
        if sub == "init":
            target = next((w for w in rest if not (isinstance(w, str) and w.startswith("-"))), None)
            out = CommandEffects(writes=[Write(under(target, here) if target is not None else here, "create")])
        return out
    raise _Unknown(f"subcommand `{sub}` is not in the vocabulary")


def _git_config_safe(setting: Word) -> None:
    key = setting.split("=", 1)[0] if isinstance(setting, str) else None
    if key is None or not _GIT_SAFE_CONFIG.match(key):
        raise _Unknown(f"configuration `{_names([setting])[0]}` could make git run a program")


def _git_config(rest: list[Word], here: Word) -> CommandEffects:
    p = parse(rest, opts("--global --system --local --get --get-all --list -l --unset --unset-all --add --bool "
                         "--int --path --show-origin --replace-all --get-regexp --null -z --name-only",
                         valued="--file -f --type --default"))
    reading = p.has("--get", "--get-all", "--list", "-l", "--get-regexp")
    if reading or len(p.operands) < 2 and not p.has("--unset", "--unset-all"):
        return CommandEffects()
    key = p.operands[0] if p.operands else Unknown("no key")
    _git_config_safe(key)
    if p.has("--global"):
        where: Word = Unknown("the user's ~/.gitconfig")
    elif p.has("--system"):
        where = "/etc/gitconfig"
    else:
        where = under(".git/config", here)
    # A setting of a key `_git_config_safe` let through (no hook, no alias that runs code).
    return CommandEffects(writes=[Write(where, "config")])


_GIT_CLONE = opts("-q -v -n -l -s --quiet --verbose --no-checkout --bare --mirror --recursive --recurse-submodules "
                  "--single-branch --no-single-branch --shallow-submodules --no-tags --progress --local "
                  "--no-hardlinks --shared --sparse --remote-submodules --also-filter-submodules",
                  valued="-b -o -j -u --branch --origin --depth --jobs --filter --reference --separate-git-dir "
                         "--shallow-since --shallow-exclude --revision --template --upload-pack",
                  attached="--recurse-submodules")


def _git_clone(rest: list[Word], repo: Word | None) -> CommandEffects:
    p = parse(rest, _GIT_CLONE)
    if p.values("-u", "--upload-pack", "--template"):
        raise _Unknown("a clone that runs a program (`--upload-pack`, `--template`)")
    if not p.operands or len(p.operands) > 2:
        raise _Unknown(f"{len(p.operands)} operands")
    url = p.operands[0]
    if len(p.operands) == 2:
        dest = p.operands[1]
    elif isinstance(url, str):
        dest = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    else:
        dest = Unknown(f"the folder named after an unknown URL ({url.why})")
    target = under(dest, repo)
    out = CommandEffects(downloads=[Download(url, target)], writes=[Write(target, "checkout")])
    local = url.removeprefix("file://") if isinstance(url, str) else None
    if local is not None and local.startswith(("/", ".")) and not p.has(
            "-n", "--no-checkout", "--bare", "--mirror", "--sparse", "--recursive", "--recurse-submodules") \
            and not p.values("-b", "--branch", "--revision", "--filter", "--separate-git-dir"):
        # A clone of a local folder (`git clone "$GITHUB_WORKSPACE" /tmp/ws`): when it is the
        # checkout, its commit's files (fs.Files.copy "commit").
        out.copies = [Copy("commit", target, ((under(local, repo), ""),))]
    return out


def _git_apply(rest: list[Word], repo: Word | None) -> CommandEffects:
    p = parse(rest, opts("-R -v -q --check --apply --stat --numstat --summary --index --cached --reverse --reject "
                         "--verbose --quiet --3way -3 --ignore-whitespace "
                         "--ignore-space-change --unidiff-zero --allow-empty --recount --intent-to-add -N",
                         valued="-p -C --directory --exclude --include --whitespace"))
    here = repo if repo is not None else "."
    reads = [under(f, repo) for f in p.operands if f != "-"]
    if p.has("--check", "--stat", "--numstat", "--summary") and not p.has("--apply"):
        return CommandEffects(reads=reads)
    folder = p.last("--directory")
    target = under(folder, here) if folder is not None else here
    return CommandEffects(reads=reads, writes=[Write(under(".git", here) if p.has("--cached") else target,
                                                     "in-place edit")])


_CLOUD_SERVICE = {"aws": "s3", "gcloud": "storage"}  # gsutil is storage already


def _cloud_copy(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`aws s3 cp|sync|mv SRC DST`, `gsutil [-m] cp|rsync|mv SRC... DST`, `gcloud storage cp|rsync`:
    an `s3://`/`gs://` source is a download into DST, a bucket destination an upload (only
    reads here); listing buckets has no effect. Other services and forms are not interpreted."""
    words = list(args)
    service = _CLOUD_SERVICE.get(name.rsplit("/", 1)[-1] if isinstance(name, str) else "")
    if service is not None:
        if words[:1] != [service]:
            raise _Unknown(f"a command other than `{service}`")
        words = words[1:]
    while words and words[0] == "-m":
        words = words[1:]
    p = parse(words, opts("-r -R -n -c -e -u -q --recursive --quiet --no-progress --dryrun --only-show-errors "
                          "--no-sign-request --delete --exact-timestamps --no-clobber",
                          valued="--exclude --include --region --profile --endpoint-url --acl --storage-class "
                                 "--sse --expires --cache-control --content-type --project -x -j -z"))
    if not p.operands:
        raise _Unknown("no subcommand")
    sub, rest = p.operands[0], p.operands[1:]
    if sub in ("ls", "du", "stat", "cat"):
        return CommandEffects()
    if sub not in ("cp", "sync", "mv", "rsync"):
        raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")
    return _transfer(rest, cwd, _BUCKET)

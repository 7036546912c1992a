"""The pinned catalogue of downloadable datasets (``download.sources``) and its record types.

Split from ``download.py`` (which fetches what this lists); see that module's docstring.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


class DownloadError(RuntimeError):
    """A download failed (HTTP error, checksum mismatch, unexpected archive layout)."""


class OfflineError(DownloadError):
    """The source host cannot be reached at all."""


@dataclass(frozen=True)
class Endpoints:
    """Base URLs of every host; tests point them at 127.0.0.1."""

    github_raw: str = "https://raw.githubusercontent.com"
    github_api: str = "https://api.github.com"
    parlai: str = "http://parl.ai/downloads"
    lamp: str = "https://ciir.cs.umass.edu/downloads/LaMP"
    hf: str = field(default_factory=lambda: os.environ.get("HF_ENDPOINT", "https://huggingface.co"))


@dataclass(frozen=True)
class RemoteFile:
    """One file fetched to ``dest`` (relative to the dataset folder)."""

    url: str
    dest: str
    sha256: str | None = None


@dataclass(frozen=True)
class Tarball:
    """An archive checked against ``sha256`` and unpacked so that ``marker`` lands at ``dest``.

    ``marker`` is a file or folder name the archive contains (e.g. ``msc_dialogue``); the
    contents of its parent folder in the archive are moved to ``dest`` (relative to the
    dataset folder), whatever the archive's top-level layout. ``expect`` lists files (relative
    to ``dest``) that a complete copy has: a partial copy (e.g. one without MSC's session-5
    files) is fetched again, and an archive without them is an error.
    """

    url: str
    sha256: str
    dest: str
    marker: str
    expect: tuple[str, ...] = ()


@dataclass(frozen=True)
class GitTree:
    """Blobs of a GitHub commit whose path matches a glob; each checked by its git blob sha."""

    repo: str
    commit: str
    patterns: tuple[str, ...]


@dataclass(frozen=True)
class HubFiles:
    """Files of a Hugging Face dataset repo (``files`` empty = the whole snapshot)."""

    repo: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """Where one dataset comes from and the folder it goes to."""

    name: str
    folder: str
    license: str
    files: tuple[RemoteFile, ...] = ()
    tarballs: tuple[Tarball, ...] = ()
    trees: tuple[GitTree, ...] = ()
    hub: tuple[HubFiles, ...] = ()
    note: str = ""


LUFY = ("ryuichi-sumida/LUFY", "e0695216d52a38ef39ec2f91708d324877e328bd")
GVD = ("zhongwanjun/MemoryBank-SiliconFriend", "cf61c4196e4cfdb0f2b7a0316249fa40312dc3a9")
CARECALL = ("naver-ai/carecall-memory", "ba45381f2532d359efb49e5f8743f32fef2d92e9")
THEANINE = ("kimnamssya/Theanine", "650797962eacd28f07b34a351b655303f1c8533d")
# sha256 pinned by ParlAI (parlai/tasks/msc/build.py, parlai/tasks/convai2/build.py)
MSC_SHA256 = "e640e37cf4317cd09fc02a4cd57ef130a185f23635f4003b0cee341ffcb45e60"
# msc_v0.1 holds msc_dialogue/session_{2,3,4}/{train,valid,test}.txt and session_5/{valid,test}.txt
# (MSC paper: session 5 has no train split). The files are checked through the archive's sha256;
# ParlAI publishes no per-file hashes, so theirs are unknown here.
MSC_EXPECT = tuple(
    f"msc_dialogue/session_{n}/{split}.txt"
    for n, splits in (
        (2, "train valid test"),
        (3, "train valid test"),
        (4, "train valid test"),
        (5, "valid test"),
    )
    for split in splits.split()
)
CONVAI2_SHA256 = "d0ae89defe2fd0b0a4221eaa642a457d7d40cef475f54798119c7f3b8dd9361d"
# sha256 of upstream files at the pinned commits (computed on byte-identical copies):
# (repo, path in repo, path in the dataset folder, sha256)
GITHUB_FILES = {
    "gvd": [
        (GVD, f"eval_data/{p}", f"eval_data/{p}", h)
        for p, h in [
            (
                "en/memory_bank_en.json",
                "27c302202f9675d87dcaa73e3a42dc0fca8999dcff3c6e7882a787c8a08d9bc7",
            ),
            (
                "en/probing_questions_en.jsonl",
                "84538a41e5a9c8000850c19008a85445b01bf52c9960c9d735d21a4b73e5c648",
            ),
            (
                "cn/memory_bank_cn.json",
                "6098382314c7e5cf1d4564a3b587e9863b1e083f2ba56ce3fbbea68a1c91d287",
            ),
            (
                "cn/probing_questions_cn.jsonl",
                "10f26828cc14a98b6dca39223d7536b7b9af38f1fe68d7851070a64ec0339aa7",
            ),
        ]
    ],
    "carecall": [
        (
            CARECALL,
            "data/carecall-memory-sample.json",
            "data/carecall-memory-sample.json",
            "49ecf399421394ca39a2a790dbe05415ee5ada8f693f54b2aea9e2abf36f4f35",
        ),
    ],
    "msc": [
        (
            THEANINE,
            "resources/data/sample_dialogue.json",
            "theanine_sample/resources/data/sample_dialogue.json",
            "2a8a953bc3f32d87fee7c87e5699a424635f4ec9506ae8eb90a42052bd9d9597",
        ),
    ],
}
LAMP1_FILES = [f"{s}/{s}_{k}.json" for s in ("train", "dev") for k in ("questions", "outputs")]
LAMP1_FILES.append("test/test_questions.json")


# LoCoMo's release as the authors' repository ships it (../shared/data/locomo/SOURCE.md).
LOCOMO_COMMIT = "e76cdff4a04fce19090596d49862fe87a5c15aaa"
LOCOMO_SHA256 = "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5"
LOCOMO_CONVERSATIONS = (26, 30, 41, 42, 43, 44, 47, 48, 49, 50)
# LongMemEval's cleaned release is on the Hugging Face hub only (../shared/data/longmemeval/SOURCE.md)
LONGMEMEVAL_FILES = ("longmemeval_oracle.json", "longmemeval_s_cleaned.json")


def _github(ep: Endpoints, name: str) -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(f"{ep.github_raw}/{repo}/{commit}/{urllib.parse.quote(path)}", dest, sha)
        for (repo, commit), path, dest, sha in GITHUB_FILES[name]
    )


def sources(ep: Endpoints | None = None, *, with_train: bool = False) -> dict[str, Source]:
    """Return every downloadable dataset by its loader name.

    ``with_train`` adds Conversation Chronicles' train split (1.35 GB; the papers evaluate on
    test/valid).
    """
    ep = ep or Endpoints()
    cc_files = ("train.jsonl",) * with_train + ("valid.jsonl", "test.jsonl")
    lamp = [
        RemoteFile(f"{ep.lamp}/{base}LaMP_1/{f}", f"{setting}/LaMP_1/{Path(f).name}")
        for setting, base in (("user", ""), ("time", "time/"))
        for f in LAMP1_FILES
    ]
    catalog = [
        Source(
            "lufy",
            "lufy",
            "none stated by the authors (research use; cite Sumida et al.)",
            trees=(GitTree(*LUFY, ("Dataset/*.xlsx", "Code/roberta/emobank.csv")),),
        ),
        Source("gvd", "gvd", "MIT", files=_github(ep, "gvd")),
        Source(
            "carecall",
            "carecall_mem",
            "NAVER Corp.: non-commercial research only, no modification, no redistribution",
            files=_github(ep, "carecall"),
            note="public sample only; the full dataset needs NAVER's request form",
        ),
        Source(
            "msc",
            "msc",
            "no explicit data license (ParlAI code is MIT); cite Xu et al. 2022",
            tarballs=(
                Tarball(
                    f"{ep.parlai}/msc/msc_v0.1.tar.gz",
                    MSC_SHA256,
                    "msc",
                    "msc_dialogue",
                    expect=MSC_EXPECT,
                ),
            ),
            files=_github(ep, "msc"),
            note="sessions 1-5: session-5 dialogues exist for valid/test only (no train)",
        ),
        Source(
            "persona_chat",
            "persona_chat",
            "no explicit data license (ParlAI ConvAI2)",
            tarballs=(
                Tarball(
                    f"{ep.parlai}/convai2/convai2_fix_723.tgz",
                    CONVAI2_SHA256,
                    "data/ConvAI2",
                    "train_self_original_no_cands.txt",
                ),
            ),
        ),
        Source(
            "cc",
            "conversation_chronicles",
            "CC BY 4.0",
            hub=(HubFiles("jihyoung/ConversationChronicles", cc_files),),
            note="" if with_train else "train.jsonl (1.35 GB) skipped; --with-train adds it",
        ),
        Source(
            "teabag",
            "teabag",
            "unknown (see the dataset card)",
            hub=(HubFiles("LangAGI-Lab/teafarm"),),
            note="TeaBag's schema is unknown to recallbench: files kept as published",
        ),
        Source("lamp1", "lamp1", "CC BY-NC-SA 4.0", files=tuple(lamp)),
        Source(
            "locomo",
            "locomo",
            "CC BY-NC 4.0 (research use with attribution; cite Maharana et al. 2024)",
            tarballs=(
                Tarball(
                    f"{ep.github_raw}/snap-research/locomo/{LOCOMO_COMMIT}/data/locomo10.zip",
                    LOCOMO_SHA256,
                    "data/multimodal_dialog/locomo10_v2",
                    "locomo10_v2",
                    expect=tuple(f"locomo10_v2/{n}.json" for n in LOCOMO_CONVERSATIONS),
                ),
            ),
            note="the authors' 10-conversation release (data/locomo10.zip at a pinned commit)",
        ),
        Source(
            "longmemeval",
            "longmemeval",
            "MIT (xiaowu0162/LongMemEval)",
            hub=(HubFiles("xiaowu0162/longmemeval-cleaned", LONGMEMEVAL_FILES),),
            note="the cleaned release, oracle and S; M (longmemeval_m_cleaned.json, 2.7 GB) is "
            "left out: fetch it by hand into the same folder (datasets/longmemeval.py reads it)",
        ),
    ]
    return {source.name: source for source in catalog}

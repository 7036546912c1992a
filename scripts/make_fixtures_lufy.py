"""Write the LUFY xlsx fixtures: invented conversations in the real format, with its quirks.

Run from the project root (rewrites ``data/fixtures/lufy/Dataset``):

    .venv/bin/python scripts/make_fixtures_lufy.py [--out data/fixtures/lufy]

The layout and sheets follow ``lufy/Dataset/{System}/{User}/Session{n}/Annotator{k}.xlsx`` (see
``recallbench.datasets.lufy``). Output is byte-reproducible: zip timestamps and document
properties are pinned, so rerunning leaves git clean. Quirks reproduced (``QUIRKS`` below):
``Unnamed: 0`` label header, extra empty ``Unnamed: n`` columns with a lone space, labels filled
down onto bot and separator rows, a missing separator row, a bot turn with no text, padded text,
annotator comments after A3 and beside a QA row, QA text naming the bot "Naomi" in one copy, an
edited utterance in one copy and a copy missing its last turn pair.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import zipfile
from pathlib import Path

import openpyxl

BOT = "Luke"
ZIP_TIME = (2024, 1, 1, 0, 0, 0)
DOC_TIME = "2024-01-01T00:00:00Z"

# (system, user, session) -> (pairs, qa). A pair is (bot text, user text, labels "abc" of
# annotators 0, 1, 2); bot text None is a turn the bot failed to produce (as in the real data).
SESSIONS: dict[tuple[str, str, int], tuple[list[tuple[str | None, str, str]], list[tuple]]] = {
    ("LUFY", "Zoe", 1): (
        [
            (
                "Hi, I'm Luke, your AI friend! Tell me your age and what you do?",
                "Hello Luke, I am Zoe, 29, I teach chemistry in Sendai.",
                "100",
            ),
            (
                "Chemistry! Do your students like the lab days?",
                "They adore flame tests, lithium burns a deep red.",
                "010",
            ),
            (
                "Sounds spectacular. What do you do after class?",
                "I practise the cello, my recital is in March.",
                "111",
            ),
        ],
        [
            ("What subject does Zoe teach?", "Chemistry."),
            ("Which instrument does Zoe play?", "The cello."),
            ("When is Zoe's recital?", "In March."),
        ],
    ),
    ("LUFY", "Zoe", 2): (
        [
            (
                "Welcome back Zoe! How did the week go?",
                "Busy, my cat Pixel knocked a beaker off my desk.",
                "110",
            ),
            ("Oh no, is Pixel alright?", "She is fine, only the beaker died.", "000"),
            ("Ha! Any plans for the weekend?", "Hiking Mount Zao with my sister Ren.", "101"),
        ],
        [
            ("What is the name of Zoe's cat?", "Pixel."),
            ("Where is Zoe hiking this weekend?", "Mount Zao."),
            ("Who is Zoe hiking with?", "Her sister Ren."),
        ],
    ),
    ("LUFY", "Zoe", 3): (
        [
            ("Hi Zoe, how was Mount Zao?", "Foggy but the snow monsters were amazing.", "100"),
            (
                "Snow monsters sound magical. Did Ren enjoy it?",
                "She slipped twice and laughed every time.",
                "000",
            ),
            (
                "What would you like to talk about today?",
                "Can you suggest a name for my new sourdough starter?",
                "011",
            ),
            ("How about Bubbles?", "Bubbles it is, thanks Luke.", "000"),
        ],
        [
            ("What did Zoe see on Mount Zao?", "Snow monsters."),
            ("What did Zoe ask Luke to name?", "Her sourdough starter."),
            ("What name did Luke suggest?", "Bubbles."),
        ],
    ),
    ("LUFY", "Zoe", 4): (
        [
            (
                "Good evening Zoe! How is Bubbles doing?",
                "Bubbles doubled overnight, bread on Sunday.",
                "110",
            ),
            (None, "Luke? Are you there?", "000"),
            (
                "Sorry about that! Anything new at school?",
                "We start a unit on electrochemistry next week.",
                "101",
            ),
        ],
        [
            ("What happened to Bubbles overnight?", "It doubled."),
            ("When will Zoe bake bread?", "On Sunday."),
            ("What unit starts next week?", "Electrochemistry."),
        ],
    ),
    ("LUFY", "Omar", 1): (
        [
            (
                "Hi, I'm Luke, your AI friend! Where are you from?",
                "I'm Omar from Cairo, studying robotics in Osaka.",
                "110",
            ),
            (
                "Robotics in Osaka, exciting! What are you building?",
                "A little robot that waters my basil.",
                "011",
            ),
        ],
        [
            ("Where is Omar from?", "Cairo."),
            ("What does Omar study?", "Robotics."),
            ("What does Omar's robot do?", "It waters his basil."),
        ],
    ),
    ("LUFY", "Omar", 2): (
        [
            (
                "Hey Omar, how is the basil robot?",
                "It overwatered everything, the basil drowned.",
                "111",
            ),
            ("Oh dear. Will you fix it?", "Yes, I am adding a humidity sensor.", "010"),
        ],
        [
            ("What happened to Omar's basil?", "It drowned."),
            ("What sensor is Omar adding?", "A humidity sensor."),
            ("What did the robot do wrong?", "It overwatered the plants."),
        ],
    ),
    ("MemoryBank", "Zoe", 1): (
        [
            ("Hi, I'm Luke! What do you like to eat?", "Mostly ramen, the miso kind.", "100"),
            (
                "Yum! Do you cook it yourself?",
                "No, there is a stall near the station I love.",
                "010",
            ),
            ("Which station?", "Nagamachi station.", "001"),
        ],
        [
            ("What food does Zoe like?", "Miso ramen."),
            ("Does Zoe cook ramen herself?", "No, she buys it at a stall."),
            ("Near which station is the stall?", "Nagamachi station."),
        ],
    ),
    ("MemoryBank", "Zoe", 2): (
        [
            (
                "Hello again! Did you go to the ramen stall?",
                "Yes, and they had a new yuzu broth.",
                "110",
            ),
            ("How was it?", "Too sour for me, I went back to miso.", "000"),
        ],
        [
            ("What new broth did the stall have?", "Yuzu."),
            ("Did Zoe like the new broth?", "No, it was too sour."),
            ("Which ramen did Zoe go back to?", "Miso."),
        ],
    ),
    ("Naive RAG", "Zoe", 1): (
        [
            (
                "Hi, I'm Luke! What's your favourite season?",
                "Autumn, because of the maple leaves.",
                "100",
            ),
            ("Lovely. Where do you watch them?", "At Rinnoji temple garden.", "011"),
        ],
        [
            ("What is Zoe's favourite season?", "Autumn."),
            ("Why does Zoe like autumn?", "The maple leaves."),
            ("Where does Zoe watch the leaves?", "Rinnoji temple garden."),
        ],
    ),
    ("Naive RAG", "Zoe", 2): (
        [
            ("Hi Zoe! Did the leaves turn yet?", "Half of them, next week is peak.", "010"),
            ("Will you take photos?", "Yes, with my grandfather's film camera.", "111"),
        ],
        [
            ("When is the peak of the leaves?", "Next week."),
            ("Whose camera will Zoe use?", "Her grandfather's."),
            ("What kind of camera is it?", "A film camera."),
        ],
    ),
}

# (system, user, session, annotator) -> quirks applied to that annotator's copy only.
QUIRKS: dict[tuple[str, str, int, int], tuple[str, ...]] = {
    ("LUFY", "Zoe", 2, 1): ("qa_comments_after",),
    ("LUFY", "Zoe", 3, 0): ("missing_separator",),
    ("LUFY", "Zoe", 3, 1): ("qa_bot_name",),
    ("LUFY", "Omar", 1, 1): ("fill_down_labels",),
    ("LUFY", "Omar", 2, 2): ("padded_text",),
    ("MemoryBank", "Zoe", 1, 1): ("edited_text",),
    ("MemoryBank", "Zoe", 1, 2): ("drop_last_pair",),
    ("MemoryBank", "Zoe", 2, 2): ("extra_columns",),
    ("Naive RAG", "Zoe", 1, 2): ("qa_comment_beside",),
    ("Naive RAG", "Zoe", 2, 1): ("unnamed_label_header",),
}


def conversation_rows(pairs: list, user: str, annotator: int, quirks: tuple[str, ...]) -> list:
    """Return the Conversation sheet rows of one annotator's copy (header first)."""
    label_head = "Unnamed: 0" if "unnamed_label_header" in quirks else "important?"
    header: tuple = (label_head, "speaker", "utterance")
    if "extra_columns" in quirks:
        header += tuple(f"Unnamed: {i}" for i in range(3, 7))
    if "drop_last_pair" in quirks:
        pairs = pairs[:-1]
    fill = 0 if "fill_down_labels" in quirks else None  # label column filled down to every row
    rows: list[tuple] = [header]
    for i, (bot, text, labels) in enumerate(pairs):
        if "edited_text" in quirks and i == 0:
            text = text.replace("Mostly", "Mostly,")
        if "padded_text" in quirks and i == 1:
            text = f" {text}  "
        skip_separator = "missing_separator" in quirks and i == 2
        if i and not skip_separator:
            rows.append((fill, None, None))
        rows.append((0 if skip_separator else fill, BOT, bot))
        rows.append((int(labels[annotator]), user, text))
    if "fill_down_labels" in quirks:
        rows.append((0, None, None))
    if "extra_columns" in quirks:
        rows[3] = rows[3] + (None, None, None, " ")
    return rows


def question_rows(qa: list[tuple[str, str]], quirks: tuple[str, ...]) -> list[tuple]:
    """Return the Questions sheet rows of one annotator's copy (header first)."""
    header: tuple = ("Q_A", "Questions")
    rows: list[tuple] = []
    for n, (question, answer) in enumerate(qa, start=1):
        if "qa_bot_name" in quirks:
            question = question.replace("Luke", "Naomi")
        rows += [(f"Q{n}", question), (f"A{n}", answer)]
    if "qa_comments_after" in quirks:
        header += ("Unnamed: 2", "Unnamed: 3")
        rows += [(None, None, None, None)] * 3
        rows.append((None, None, None, "(Luke mixed up the cat and the sister once)"))
    if "qa_comment_beside" in quirks:
        header += ("Unnamed: 2", "Unnamed: 3", "Unnamed: 4")
        rows[2] = rows[2] + (None, None, " (is it the season or the month?)")
    return [header, *rows]


def workbook_bytes(conversation: list[tuple], questions: list[tuple]) -> bytes:
    """Build a two-sheet workbook and return it as reproducible xlsx bytes."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Conversation"
    for row in conversation:
        ws.append(row)
    qs = wb.create_sheet("Questions")
    for row in questions:
        qs.append(row)
    wb.properties.creator = "recallbench fixtures"
    buf = io.BytesIO()
    wb.save(buf)
    return pin_zip(buf.getvalue())


def pin_zip(data: bytes) -> bytes:
    """Rewrite an xlsx zip with fixed entry timestamps and document dates."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", DOC_TIME.encode(), body)
            dst.writestr(zipfile.ZipInfo(info.filename, ZIP_TIME), body, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def write_all(out: Path) -> int:
    """Write every fixture workbook under ``out/Dataset``; return the number of files."""
    dataset = out / "Dataset"
    if dataset.exists():
        shutil.rmtree(dataset)
    count = 0
    for (system, user, session), (pairs, qa) in SESSIONS.items():
        folder = dataset / system / user / f"Session{session}"
        folder.mkdir(parents=True, exist_ok=True)
        for annotator in range(3):
            quirks = QUIRKS.get((system, user, session, annotator), ())
            data = workbook_bytes(
                conversation_rows(pairs, user, annotator, quirks), question_rows(qa, quirks)
            )
            (folder / f"Annotator{annotator}.xlsx").write_bytes(data)
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/fixtures/lufy"))
    args = parser.parse_args()
    print(f"wrote {write_all(args.out)} workbooks under {args.out / 'Dataset'}")


if __name__ == "__main__":
    main()

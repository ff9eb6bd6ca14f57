"""The seats of every stored code-review committee (its proposer and elected members) as ScenarioRole rows, which
class sessions seat a group's students in; versions stored from now on get them when stored."""

from django.db import migrations


def committee_seats(apps, schema_editor):
    ScenarioVersion = apps.get_model("simulations", "ScenarioVersion")
    ScenarioRole = apps.get_model("simulations", "ScenarioRole")
    for version in ScenarioVersion.objects.filter(kind="deliberation", roles__isnull=True):
        personas = version.document.get("personas", [])
        rows = [
            ScenarioRole(
                scenario=version, role_id=p["id"], name=f"{p['title']} ({p['name']})"[:120], votes=p.get("votes", False),
                public_brief=p.get("brief", ""), position=n, kind="proposer" if p["role"] == "proposer" else "member",
            )
            for n, p in enumerate(personas)
            if (p["role"] == "proposer" or p.get("votes")) and len(p["id"]) <= 16
        ]
        ScenarioRole.objects.bulk_create(rows)


class Migration(migrations.Migration):
    dependencies = [
        ("simulations", "0025_students_choose_seats"),
    ]

    operations = [
        migrations.RunPython(committee_seats, migrations.RunPython.noop),
    ]

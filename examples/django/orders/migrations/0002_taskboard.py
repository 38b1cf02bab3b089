"""Install Taskboard's schema: 0002_taskboard.sql is `taskboard sql --no-transaction`."""

from pathlib import Path

from django.db import migrations

SQL = (Path(__file__).parent / "0002_taskboard.sql").read_text()


class Migration(migrations.Migration):
    dependencies = [("orders", "0001_initial")]
    # In a list, RunSQL sends the script as one statement batch inside the
    # migration's transaction; a plain string would be split by sqlparse.
    operations = [migrations.RunSQL([SQL])]

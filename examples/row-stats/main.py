# Row statistics: counts the records of the table in context and sums the configured number field.
table_id = context.get("table_id") or base.list_tables()[0]["id"]
field = (config or {}).get("number_field")
total, count, page = 0, 0, 1
while True:
    chunk = base.list_records(table_id, page, 200)
    for record in chunk["items"]:
        count += 1
        value = record["values"].get(field) if field else None
        if isinstance(value, (int, float)):
            total += value
    if page * 200 >= chunk["total"]:
        break
    page += 1
base.log(f"counted {count} records")
set_result({"table_id": table_id, "count": count, "sum": total})

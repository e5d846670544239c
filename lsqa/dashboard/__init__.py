"""What the dashboard pages show, as plain data and figures (never imports streamlit)."""

print("sotto-notify")

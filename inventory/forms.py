from django import forms


class ImportForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="Columns: site, rack, rack_unit, serial, hostname, model, gpu_model, "
        "gpu_count, bmc_protocol, bmc_address, bmc_username, bmc_password, boot_mac.",
    )

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > 20 * 1024 * 1024:
            raise forms.ValidationError("The file is larger than 20 MiB; split it.")
        return f

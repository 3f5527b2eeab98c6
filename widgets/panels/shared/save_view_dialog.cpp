#include "save_view_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace lengen::ui {

void askSaveView(QWidget* parent, const QStringList& existing, const QString& sharedFile,
                 std::function<void(const QString& name, bool shared)> then)
{
    auto* dialog = new QDialog(parent);
    dialog->setObjectName(QStringLiteral("ask-saveView"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(QDialog::tr("Save view"));
    auto* name = new QComboBox;
    name->setObjectName(QStringLiteral("viewName"));
    name->setEditable(true);
    name->addItems(existing);
    name->setCurrentText(QString());
    name->lineEdit()->setPlaceholderText(QDialog::tr("rope-vs-nope, long prompts"));
    auto* replaces = new QLabel;
    auto* share = new QCheckBox(
        sharedFile.isEmpty() ? QDialog::tr("Share with the runs folder (follow one first)")
                             : QDialog::tr("Share with the runs folder (%1)").arg(sharedFile));
    share->setObjectName(QStringLiteral("shareView"));
    share->setEnabled(!sharedFile.isEmpty());
    share->setToolTip(QDialog::tr("Written to lengen-views.json beside the runs: whoever opens the "
                                  "folder gets the view, and lengen runs --view NAME uses its "
                                  "filter and columns"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    auto* form = new QFormLayout(dialog);
    form->addRow(QDialog::tr("Name:"), name);
    form->addRow(QString(), replaces);
    form->addRow(QString(), share);
    form->addRow(buttons);
    // What Save will do, said before it does: replace a view of that name, or nothing to save.
    const auto update = [name, replaces, buttons, existing] {
        const QString text = name->currentText().trimmed();
        replaces->setText(existing.contains(text)
                              ? QDialog::tr("Replaces the saved view “%1”.").arg(text)
                              : QString());
        buttons->button(QDialogButtonBox::Save)->setEnabled(!text.isEmpty());
    };
    QObject::connect(name, &QComboBox::currentTextChanged, dialog, update);
    update();
    QObject::connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    QObject::connect(dialog, &QDialog::accepted, dialog, [name, share, then = std::move(then)] {
        then(name->currentText().trimmed(), share->isChecked());
    });
    dialog->open();
}

}  // namespace lengen::ui
